"""Statistics: roll-ups written with each check, figures read from them, retention."""
