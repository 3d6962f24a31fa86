"""convert workflows: distances/heights, head rules, tree and dependency formats."""
