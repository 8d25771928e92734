from kenomem.entry import main

main()
