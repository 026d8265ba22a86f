"""Front end: a kernel function -> checked IR (source, names, the subset, analysis)."""
