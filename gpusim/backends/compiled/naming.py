"""Names of IR locals in generated code."""


def clean(name: str) -> str:
    """``name`` as a Python identifier (front-end temporaries start with ``$``; tuple items are ``name.k``)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name.replace("$", "S_"))
