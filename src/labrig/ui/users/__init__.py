"""The Users and roles screen: the roster, and an admin assigning or removing roles."""
