# curl commands as an API's documentation gives them, for `mockd import examples/commands.sh
# --format curl` (docs/import-export.md): each becomes one mock. Not meant to be run.
curl 'http://localhost:8080/v1/charges?limit=3' \
  -H 'Authorization: Bearer sk_test_123' \
  -H 'Accept: application/json'

curl -X POST http://localhost:8080/v1/charges \
  -d amount=2000 \
  -d currency=usd
