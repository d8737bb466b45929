"""The Queue screen: every job with its state and live progress; Retry, Cancel and Reprocess."""
