from ppcsim.cli.commands import main

raise SystemExit(main())
