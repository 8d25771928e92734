from kenomem.cli.entry import main

main()
