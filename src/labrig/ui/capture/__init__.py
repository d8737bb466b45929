"""The Capture screen: session form, device picker, live preview, Record/Stop with the info bar, and
the attempts of the session with the progress of their analysis."""
