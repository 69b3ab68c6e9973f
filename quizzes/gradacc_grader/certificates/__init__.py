"""Certificates with a verifiable ID (the command is ``gradacc-certify``, in ``certify``).

Read in this order: ``ids`` (the ID and its check character), ``signing`` (Ed25519 keys),
``names`` (which names are signed), ``badge`` (the Open Badges 3.0 credential), ``vcjwt`` (its
signature), ``status_lists`` (revocation, naming no one), ``registry`` (the issuer's own SQLite
file, never published), ``issuing`` (from the nbgrader gradebook), ``printable`` (the PDF with
its QR code), ``baking`` (the badge image), ``publishing`` (the verification folder) and
``checking`` (what a verifier checks); ``untrusted`` reads files anyone may have made.
``records`` and ``verification`` are the older format (a signed JSON record), which still
verifies, its status unknown. The browser's copy of the checks is ``page/verify.js``.
"""
