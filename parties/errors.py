"""The error a party reports to its user: one line that names the party, file, column or field."""


class PartyError(ValueError):
    """Bad input on the party side (data, configuration)."""
