"""The lanes back end: kernel IR -> Python over NumPy lane vectors (the execution model is in ``codegen``)."""
