"""The commands of the command line interface (svmstruct.cli), one module each: what they check, run and
write. No math here, and no loss by name."""
