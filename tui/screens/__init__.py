"""One screen per file: the browser, the workspace (editor and results), the visualisers, help, confirm."""
