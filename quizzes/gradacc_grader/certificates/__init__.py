"""Certificates with a verifiable ID (the command is ``gradacc-certify``, in ``certify``).

Read in this order: ``ids`` (the ID and its check character), ``signing`` (Ed25519 keys and
signed records), ``records`` (what a certificate states, its file), ``registry`` (SQLite, and its
JSON export), ``verification`` (the checks a verifier makes), ``issuing`` (from the nbgrader
gradebook), ``printable`` (the PDF with its QR code); ``untrusted`` reads files anyone may have
made. The browser's copy of the checks is ``quizzes/verify/verify.js``.
"""
