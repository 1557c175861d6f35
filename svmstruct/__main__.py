from svmstruct.cli import main

main()
