"""preprocess workflows: corpora into dataset directories."""
