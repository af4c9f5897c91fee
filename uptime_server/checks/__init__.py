"""What a check is and how its result is judged: pure rules, no database, no network.

``types`` is what a check run is asked to do and what it found (``CheckSpec``,
``CheckResult``); ``rules`` the pass rules of one attempt and the error text a
failed one carries; ``json_path`` the JSONPath a monitor may ask for, evaluated
within a budget; ``payload`` the bytes a tcp or udp monitor sends; ``wire`` the
agent's wire format of a claimed check. ``state`` turns (previous state, run
result, now) into (new state, events); ``quorum`` combines several locations'
verdicts; ``cert_alerts`` says which certificate threshold a run crosses;
``outcomes`` is what the recorder takes and gives back; ``dependencies`` judges
a team's graph of monitor dependencies (cycles, depth, who is blocked). The engine, the API and
the probe agent share these, so a check means the same thing everywhere.

Speed tricks: JSONPath evaluation looks at the clock only every few dozen
steps, so the budget costs little on ordinary documents.
"""
