"""The Devices screen: every connected device with its verification verdict
and the reason for it."""
