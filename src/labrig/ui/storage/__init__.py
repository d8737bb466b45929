"""The Storage screen: free space, the pressure level
and how long each recording mode still fits."""
