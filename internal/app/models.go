package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// modelsTimeout is upstream's fetch_models default.
const modelsTimeout = 8 * time.Second

// ModelList is what `hermes model list` shows: the provider, where the
// names came from and the model ids.
type ModelList struct {
	Provider string
	Bundled  bool   // the provider is one of hermes' own profiles
	Source   string // "fetch_models" or the URL listed
	Models   []string
}

// ListModels lists the models of model.provider, or of provider when it is
// not "": a plugin profile's fetch_models when it overrides it and answers,
// else GET {models_url or base_url}/models.
func (h *Host) ListModels(ctx context.Context, provider string) (ModelList, error) {
	doc, err := h.Store().Load()
	if err != nil {
		return ModelList{}, err
	}
	section := maps.Clone(llm.ModelSection(doc.Map()["model"]))
	if section == nil {
		section = map[string]any{}
	}
	if _, ok := section["default"]; !ok {
		section["default"] = "-" // listing needs no model chosen
	}
	if p := strings.ToLower(strings.TrimSpace(provider)); p != "" && p != section["provider"] {
		delete(section, "base_url")
		delete(section, "api_key")
		section["provider"] = p
	}
	dotenv, err := config.ReadDotenv(h.home.EnvPath())
	if err != nil {
		return ModelList{}, err
	}
	cfg, err := h.llmConfig(ctx, section, dotenv)
	if err != nil {
		return ModelList{}, Failf("Error: %v", err)
	}
	out := ModelList{Provider: cfg.Provider}
	url := strings.TrimRight(cfg.BaseURL, "/") + "/models"
	if p, ok := h.pluginProvider(cfg.Provider); ok {
		out.Bundled = p.Bundled
		if mu := detailStr(p.Details, "models_url"); mu != "" {
			url = mu
		}
		for _, hook := range detailStrs(p.Details, "hooks") {
			if hook != "fetch_models" || p.Conn == nil {
				continue
			}
			pp := &pluginProfile{p: p}
			raw, err := pp.call(ctx, "fetch_models", map[string]any{"api_key": cfg.APIKey, "base_url": cfg.BaseURL, "timeout": modelsTimeout.Seconds()})
			if err != nil {
				return out, Failf("Error: provider %s: %v", p.Name, err)
			}
			var ids []string
			if err := json.Unmarshal(raw, &ids); err != nil {
				return out, Failf("Error: provider %s: fetch_models() returned something that is not a list of model ids", p.Name)
			}
			if ids != nil {
				out.Source, out.Models = "fetch_models", ids
				return out, nil
			}
		}
	}
	ids, err := fetchModelIDs(ctx, url, cfg.APIKey, h.f.Version)
	if err != nil {
		return out, Failf("Error: listing the models of %s: %v", cfg.Provider, err)
	}
	out.Source, out.Models = url, ids
	return out, nil
}

// fetchModelIDs reads an OpenAI-style model list: data[].id.
func fetchModelIDs(ctx context.Context, url, key, version string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("bad URL %s: %w", url, err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("User-Agent", "hermes-cli/"+version)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, termsafe.Line(string(body[:min(len(body), 200)])))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s: the answer is not a model list ({\"data\": [{\"id\": ...}]}): %w", url, err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, d := range list.Data {
		if d.ID != "" {
			ids = append(ids, d.ID)
		}
	}
	return ids, nil
}
