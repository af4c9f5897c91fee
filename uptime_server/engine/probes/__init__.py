"""One module per monitor type: the attempt that checks it."""
