"""Reading and writing files: SVMlight data (the numba tokenizer and the Dataset), inputs and atomic outputs,
TREC runs and qrels."""
