from ppcsim.cli import main

raise SystemExit(main())
