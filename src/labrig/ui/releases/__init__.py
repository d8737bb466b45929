"""The Releases screen: register, health-check, activate and roll back analysis releases."""
