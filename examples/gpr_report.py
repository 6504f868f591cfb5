#!/usr/bin/env python3
"""A slice's GPRs and their latest events, with a GraphQL client (gql).

    pip install "gql[requests]>=3.5,<4"
    EGS_SERVER=http://localhost:8080 EGS_TOKEN=$(cat token) python3 gpr_report.py nlp-research

Prints each GPR of the slice (newest first) with its phase and when it starts or ends, then
the slice's last events. Exits 1 with the gateway's message when a request is refused.
"""

import os
import sys

from gql import Client, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.requests import RequestsHTTPTransport

SLICES = gql("{ slices(first: 100) { nodes { id name } } }")
GPRS = gql(
    """
    query($slice: ID!, $after: String) {
      gprs(filter: { sliceId: $slice }, first: 100, after: $after) {
        nodes { id name phase nodeCount gpuShape startNoLaterThan exitAt }
        pageInfo { hasNextPage endCursor }
      }
    }
    """
)
EVENTS = gql(
    """
    query($slice: ID!) {
      gprEvents(sliceId: $slice, last: 10) { nodes { createdAt kind message gpr { name } } }
    }
    """
)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    slice_name = sys.argv[1]
    transport = RequestsHTTPTransport(
        url=os.environ["EGS_SERVER"].rstrip("/") + "/graphql",
        headers={"Authorization": "Bearer " + os.environ["EGS_TOKEN"]},
        timeout=30,
    )
    client = Client(transport=transport, fetch_schema_from_transport=False)
    try:
        slices = client.execute(SLICES)["slices"]["nodes"]
        found = [s["id"] for s in slices if s["name"] == slice_name]
        if not found:
            print(f"no slice named {slice_name}", file=sys.stderr)
            return 1
        gprs, after = [], None
        while True:
            page = client.execute(GPRS, variable_values={"slice": found[0], "after": after})["gprs"]
            gprs += page["nodes"]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
        events = client.execute(EVENTS, variable_values={"slice": found[0]})["gprEvents"]["nodes"]
    except TransportQueryError as error:
        print(f"refused: {error}", file=sys.stderr)
        return 1
    print(f"{len(gprs)} GPR(s) in {slice_name}:")
    for g in gprs:
        when = g["exitAt"] and f"ends {g['exitAt']}" or g["startNoLaterThan"] and f"starts by {g['startNoLaterThan']}" or ""
        print(f"  {g['name']:<24} {g['phase']:<12} {g['nodeCount']} x {g['gpuShape'] or 'any'}  {when}")
    print("Latest events:")
    for e in events:
        print(f"  {e['createdAt']}  {e['kind']:<20} {e['gpr']['name'] if e['gpr'] else '-':<24} {e['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
