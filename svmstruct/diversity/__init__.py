"""SVM-div (Yue & Joachims 2008): predicting diverse subsets by learned weighted word coverage.

features   the joint feature map of eq. (4): coverage units and their features
greedy     Algorithm 1: greedy selection for prediction and the oracle
measures   subtopic loss, S-recall, alpha-NDCG of a selection
baselines  unweighted coverage, Essential Pages, random
qrels      subtopic judgments and selection files
The loss itself is svmstruct/losses/div.py.
"""
