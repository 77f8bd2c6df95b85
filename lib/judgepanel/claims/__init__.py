"""The claims layer: a comparison's row in the ledger and the words a page may use for it.

It sits below the studies and the report and above nothing of the package: ``rows`` holds
the ``Claim`` (what was compared, its test, its p and q, its verdict) and the corrections
over a family of rows; ``wording`` holds the rules that turn a row's numbers into prose.
"""
