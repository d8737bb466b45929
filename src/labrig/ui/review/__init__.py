"""The Review screen: a published result's automatic and revised values, its history of revisions,
and the form that saves a new revision."""
