"""Authorization servers for the sign-in tests, run as a separate process."""
