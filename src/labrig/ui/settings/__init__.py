"""The Settings screen: where the data lives and what schema it has."""
