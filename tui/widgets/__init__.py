"""One widget per file: the browser's tree and page, the editor, the results, and the five visualisers."""
