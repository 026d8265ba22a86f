"""Chapter 6: Scans."""

NUMBER = 6
TITLE = 'Scans'
