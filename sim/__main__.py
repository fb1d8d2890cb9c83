from sim.cli.root import main

main()
