"""Tables, figures and the reproduction report, computed from stored results."""
