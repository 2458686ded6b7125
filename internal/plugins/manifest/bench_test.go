package manifest

import "testing"

// benchManifest is a realistic manifest of about ten lines.
const benchManifest = `name: weather-tools
version: "1.4.2"
description: Weather lookups and forecast alerts for the agent
author: Jane Doe
provides_tools:
  - weather_now
  - weather_forecast
provides_hooks: [post_tool_call]
requires_env:
  - OPENWEATHER_API_KEY
tags: [weather, api]
`

func BenchmarkParse(b *testing.B) {
	data := []byte(benchManifest)
	for b.Loop() {
		if _, _, err := Parse(data, "plugin.yaml", "weather-tools"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseGeneral is the same manifest through the general decoder,
// the cost every manifest outside the fast subset pays.
func BenchmarkParseGeneral(b *testing.B) {
	data := []byte(benchManifest)
	for b.Loop() {
		if _, err := slowDecode(data, "plugin.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
