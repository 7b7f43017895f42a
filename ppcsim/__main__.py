from ppcsim.cli.parser import main

raise SystemExit(main())
