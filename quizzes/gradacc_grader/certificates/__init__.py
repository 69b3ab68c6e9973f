"""Certificates with a verifiable ID (the command is ``gradacc-certify``, in ``certify``).

Read in this order: ``ids`` (the ID and its check character), ``signing`` (Ed25519 keys and
signed records), ``records`` (what a certificate states, its file), ``published`` (the signed,
numbered, dated and chained registry.json), ``registry`` (SQLite, and its export), ``seen``
(the newest registry a verifier has checked), ``verification`` (the checks a verifier makes),
``issuing`` (from the nbgrader gradebook), ``printable`` (the PDF with its QR code), ``offline``
(the page's registry.js, for reading it from disk); ``untrusted`` reads files anyone may have
made. The browser's copy of the checks is ``quizzes/verify/verify.js``.
"""
