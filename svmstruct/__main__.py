from svmstruct.command import main

main()
