"""Back ends: translate the kernel IR into code and run it."""
