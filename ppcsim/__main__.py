from ppcsim.cli.entry import program

program()
