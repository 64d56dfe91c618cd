// Command registry drives Cognizes' Agent Registry API with ADK for Go's own
// client (google.golang.org/adk/v2/agentregistry), as an agent written with
// ADK for Go would discover Cognizes' agents and MCP servers:
//
//   - the client has no endpoint setting, so its Config.HTTPClient carries a
//     RoundTripper that sends its requests (made for
//     https://agentregistry.googleapis.com/v1/...) to Cognizes, with the key;
//   - it lists and gets the app's agent and MCP server records, paged and filtered;
//   - RemoteAgent turns the agent's record (its embedded A2A card) into an A2A
//     sub-agent and MCPToolset the MCP server's record into a toolset, and a local
//     agent, on a scripted offline model, uses both in one turn: it calls the
//     registry's get_weather over MCP, then hands the conversation to the
//     Cognizes agent over A2A, which answers.
//
// Settings come from the environment: COGNIZES_URL (http://host:port) and
// COGNIZES_KEY (a key of the app "weather" for one user); with COGNIZES_APP_KEY
// (a key of the whole app), the remote agent called with it and no X-User-Id
// must say why it refuses (issue 43). Project "p", location "us-central1". Every check prints "ok: ..." or "FAIL: ..."; the exit code is
// 1 when any check failed and 2 on a usage or setup error.
package main

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/agentregistry"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
)

const (
	parent     = "projects/p/locations/us-central1"
	agentName  = parent + "/agents/weather"
	serverName = parent + "/mcpServers/weather-tools"
	offline    = "[offline model]" // how the demo's scripted model starts every answer
)

// --8<-- [start:round-tripper]
// toCognizes sends the registry client's requests to Cognizes, with the key: the
// client's base URL is a constant, and its HTTPClient the one way in.
type toCognizes struct {
	base   http.RoundTripper
	target *url.URL
	key    string
}

func (t toCognizes) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.target.Scheme, t.target.Host, t.target.Host
	r.Header.Set("Authorization", "Bearer "+t.key)
	return t.base.RoundTrip(r)
}

// --8<-- [end:round-tripper]

// scripted calls get_weather, then, given its result, transfers to the remote agent.
type scripted struct{ offered []string }

func (m *scripted) Name() string { return "scripted-offline" }

func (m *scripted) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	for name := range req.Tools {
		m.offered = append(m.offered, name)
	}
	call := &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris", "unit": "fahrenheit"}}
	last := req.Contents[len(req.Contents)-1]
	for _, part := range last.Parts {
		if part.FunctionResponse != nil {
			call = &genai.FunctionCall{Name: "transfer_to_agent", Args: map[string]any{"agent_name": "weather_assistant"}}
		}
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel,
			Parts: []*genai.Part{{FunctionCall: call}}}}, nil)
	}
}

type checker struct{ failed int }

func (c *checker) check(ok bool, what string, args ...any) {
	if ok {
		fmt.Printf("ok: %s\n", fmt.Sprintf(what, args...))
	} else {
		c.failed++
		fmt.Printf("FAIL: %s\n", fmt.Sprintf(what, args...))
	}
}

func main() {
	target, err := url.Parse(os.Getenv("COGNIZES_URL"))
	key := os.Getenv("COGNIZES_KEY")
	if err != nil || target.Host == "" || key == "" {
		fmt.Fprintln(os.Stderr, "set COGNIZES_URL (http://host:port) and COGNIZES_KEY")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// --8<-- [start:client]
	registry, err := agentregistry.New(ctx, agentregistry.Config{ProjectID: "p", Location: "us-central1",
		HTTPClient: &http.Client{Transport: toCognizes{http.DefaultTransport, target, key}}})
	// --8<-- [end:client]
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentregistry.New:", err)
		os.Exit(2)
	}
	c := &checker{}
	records(ctx, c, registry)
	oneTurn(ctx, c, registry, map[string]string{"Authorization": "Bearer " + key})
	if appKey := os.Getenv("COGNIZES_APP_KEY"); appKey != "" {
		withoutUser(ctx, c, registry, target, appKey)
	}
	if c.failed > 0 {
		os.Exit(1)
	}
}

func records(ctx context.Context, c *checker, registry *agentregistry.Client) {
	var agents []string
	for found, err := range registry.AllAgents(ctx, agentregistry.WithPageSize(1)) {
		if err != nil {
			c.check(false, "AllAgents: %v", err)
			return
		}
		agents = append(agents, found.Name)
	}
	c.check(len(agents) == 1 && agents[0] == agentName, "AllAgents lists the app's agent: %v", agents)
	info, err := registry.GetAgent(ctx, agentName)
	c.check(err == nil && info.Card != nil && info.Card.Type == "A2A_AGENT_CARD" &&
		strings.Contains(string(info.Card.Content), "supportedInterfaces"),
		"GetAgent embeds the A2A card (err %v)", err)
	filtered, err := registry.ListAgents(ctx, agentregistry.WithFilter(`agentId="nobody"`))
	c.check(err == nil && len(filtered.Agents) == 0, "a filter that matches nothing lists nothing (err %v)", err)
	var servers []string
	for found, err := range registry.AllMCPServers(ctx) {
		if err != nil {
			c.check(false, "AllMCPServers: %v", err)
			return
		}
		servers = append(servers, found.Name)
	}
	c.check(len(servers) == 1 && servers[0] == serverName, "AllMCPServers lists the app's tool registry: %v", servers)
	server, err := registry.GetMCPServer(ctx, serverName)
	var listed []string
	if err == nil {
		for _, tool := range server.Tools {
			listed = append(listed, tool.Name)
		}
	}
	// The memory's tools first (runtime_app/mcp_memory.py), then the registry's.
	c.check(err == nil && strings.Join(listed, " ") == "remember search_memories list_memories forget_memory get_weather",
		"GetMCPServer lists its tools: %v (err %v)", listed, err)
	_, err = registry.GetAgent(ctx, parent+"/agents/nobody")
	apiError, isAPIError := err.(*agentregistry.APIError)
	c.check(isAPIError && apiError.StatusCode == 404 && strings.Contains(apiError.Body, "NOT_FOUND"),
		"an unknown agent is Google's 404 (%v)", err)
}

func oneTurn(ctx context.Context, c *checker, registry *agentregistry.Client, headers map[string]string) {
	// --8<-- [start:agent-and-tools]
	remote, err := registry.RemoteAgent(ctx, agentName, agentregistry.WithA2AHeaders(headers))
	if err != nil {
		c.check(false, "RemoteAgent: %v", err)
		return
	}
	tools, err := registry.MCPToolset(ctx, serverName, agentregistry.WithMCPHeaders(headers))
	// --8<-- [end:agent-and-tools]
	if err != nil {
		c.check(false, "MCPToolset: %v", err)
		return
	}
	llm := &scripted{}
	local, err := llmagent.New(llmagent.Config{Name: "traveller", Model: llm, Toolsets: []tool.Toolset{tools},
		SubAgents: []agent.Agent{remote}})
	if err != nil {
		c.check(false, "llmagent.New: %v", err)
		return
	}
	r, err := runner.New(runner.Config{AppName: "elsewhere", Agent: local, SessionService: session.InMemoryService(),
		AutoCreateSession: true})
	if err != nil {
		c.check(false, "runner.New: %v", err)
		return
	}
	var weather string
	var answers []string
	message := genai.NewContentFromText("I prefer Fahrenheit.", genai.RoleUser)
	for event, err := range r.Run(ctx, "someone", "s1", message, agent.RunConfig{}) {
		if err != nil {
			c.check(false, "the turn: %v", err)
			return
		}
		if event.Content == nil {
			continue
		}
		for _, part := range event.Content.Parts {
			if part.FunctionResponse != nil && part.FunctionResponse.Name == "get_weather" && event.Author == local.Name() {
				weather = fmt.Sprint(part.FunctionResponse.Response)
			}
			if part.Text != "" && !part.Thought && event.Author == remote.Name() {
				answers = append(answers, part.Text)
			}
		}
	}
	c.check(remote.Name() == "weather_assistant", "the remote agent is named by its card: %q", remote.Name())
	c.check(strings.Contains(strings.Join(llm.offered, " "), "get_weather"), "the model was offered the MCP tool: %v",
		llm.offered)
	c.check(strings.Contains(weather, "64"), "get_weather answered over MCP: %s", weather)
	// What the remote agent says depends on how ADK for Go words the turn so far for it (as "For context: …").
	c.check(len(answers) > 0 && strings.HasPrefix(answers[len(answers)-1], offline),
		"the Cognizes agent answered over A2A: %q", answers)
}

// withoutUser calls the remote agent (A2A) and the registry's tool (MCP) with a key of
// the whole app and no X-User-Id: each refusal reaches the Go caller in words that name
// the header and the other way (a key of one user), not as a bare "400 Bad Request".
func withoutUser(ctx context.Context, c *checker, registry *agentregistry.Client, target *url.URL, appKey string) {
	tools, err := mcp.NewClient(&mcp.Implementation{Name: "cognizes-go-registry", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: target.String() + "/mcp/weather/", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: toCognizes{http.DefaultTransport, target, appKey}}}, nil)
	if err != nil {
		c.check(false, "MCP connect with a key of the whole app: %v", err)
		return
	}
	defer tools.Close()
	_, err = tools.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather",
		Arguments: map[string]any{"city": "Paris", "unit": "celsius"}})
	c.check(err != nil && strings.Contains(err.Error(), "X-User-Id") &&
		strings.Contains(err.Error(), "create_api_key weather --user"),
		"a key of the whole app without X-User-Id is told over MCP how to name its user: %v", err)

	headers := map[string]string{"Authorization": "Bearer " + appKey}
	remote, err := registry.RemoteAgent(ctx, agentName, agentregistry.WithA2AHeaders(headers))
	if err != nil {
		c.check(false, "RemoteAgent with a key of the whole app: %v", err)
		return
	}
	r, err := runner.New(runner.Config{AppName: "elsewhere", Agent: remote, SessionService: session.InMemoryService(),
		AutoCreateSession: true})
	if err != nil {
		c.check(false, "runner.New: %v", err)
		return
	}
	var said []string
	message := genai.NewContentFromText("Hello.", genai.RoleUser)
	for event, err := range r.Run(ctx, "someone", "s2", message, agent.RunConfig{}) {
		if err != nil {
			said = append(said, err.Error())
		} else if event.ErrorMessage != "" {
			said = append(said, event.ErrorMessage)
		}
	}
	text := strings.Join(said, " | ")
	c.check(strings.Contains(text, "X-User-Id") && strings.Contains(text, "create_api_key weather --user"),
		"a key of the whole app without X-User-Id is told over A2A how to name its user: %q", text)
}
