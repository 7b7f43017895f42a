from ppcsim.cli.entry import main

raise SystemExit(main())
