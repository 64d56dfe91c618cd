// Command cognizes-go-client drives a Cognizes gRPC server with Google's own Go
// clients, as an agent written with ADK for Go would:
//
//   - default mode: the ADK session contract through ADK-Go's Vertex AI session
//     service (google.golang.org/adk/v2/session/vertexai);
//   - -memory: the Memory Bank through cloud.google.com/go/aiplatform/apiv1beta1's
//     MemoryBankClient (ADK-Go's own memory/vertexai always dials Google, so it
//     cannot be pointed at Cognizes);
//   - -concurrent N: N AppendEvent calls to one existing session, from N
//     goroutines, for a concurrency test run alongside another client.
//
// Settings come from the environment: COGNIZES_GRPC (host:port),
// COGNIZES_KEY (sent as x-goog-api-key on every call), COGNIZES_ENGINE_ID (the
// reasoning engine id) and, for TLS, COGNIZES_GRPC_CA (the server's certificate). Project "p", location
// "us-central1". Every check prints "ok: ..." or "FAIL: ..."; the exit code is
// 1 when any check failed and 2 on a usage or setup error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/genai"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/vertexai"
)

const (
	projectID = "p"
	location  = "us-central1"
)

// settings are read from the environment once, in main.
type settings struct {
	endpoint string // host:port of the Cognizes gRPC server
	key      string // Cognizes API key
	engineID string // reasoning engine id
	ca       string // PEM file of the server's TLS certificate; empty: plaintext
}

func (s settings) engineName() string {
	return fmt.Sprintf("projects/%s/locations/%s/reasoningEngines/%s", projectID, location, s.engineID)
}

// checker counts failed checks.
type checker struct {
	mu     sync.Mutex
	failed int
}

func (c *checker) ok(format string, args ...any) {
	fmt.Printf("ok: "+format+"\n", args...)
}

func (c *checker) fail(format string, args ...any) {
	c.mu.Lock()
	c.failed++
	c.mu.Unlock()
	fmt.Printf("FAIL: "+format+"\n", args...)
}

// check prints ok or FAIL for a condition and returns it.
func (c *checker) check(cond bool, what string, detailOnFail string, args ...any) bool {
	if cond {
		c.ok("%s", what)
	} else {
		c.fail("%s: "+detailOnFail, append([]any{what}, args...)...)
	}
	return cond
}

// --8<-- [start:grpc-options]
// clientOptions points a Google Go client at the Cognizes gRPC server. With
// COGNIZES_GRPC_CA (the server's certificate, PEM) it is TLS and the key goes as
// in Google's cloud, option.WithAPIKey; without, plain gRPC, no Google
// credentials, and the key as per-call metadata (WithAPIKey demands TLS).
func clientOptions(s settings) []option.ClientOption {
	if s.ca != "" {
		tls, err := credentials.NewClientTLSFromFile(s.ca, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "COGNIZES_GRPC_CA:", err)
			os.Exit(2)
		}
		return []option.ClientOption{
			option.WithEndpoint(s.endpoint),
			option.WithAPIKey(s.key),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(tls)),
		}
	}
	addKey := func(ctx context.Context) context.Context {
		if s.key == "" {
			return ctx
		}
		return metadata.AppendToOutgoingContext(ctx, "x-goog-api-key", s.key)
	}
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(addKey(ctx), method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(addKey(ctx), desc, cc, method, opts...)
	}
	return []option.ClientOption{
		option.WithEndpoint(s.endpoint),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		// grpc.WithUnaryInterceptor sets the connection's single interceptor;
		// the transport's own (OpenTelemetry) ones are added with
		// WithChainUnaryInterceptor, and grpc runs this one first, then those.
		option.WithGRPCDialOption(grpc.WithUnaryInterceptor(unary)),
		option.WithGRPCDialOption(grpc.WithStreamInterceptor(stream)),
	}
}

// --8<-- [end:grpc-options]

func main() {
	memoryMode := flag.Bool("memory", false, "run the Memory Bank checks (MemoryBankClient) instead of the session checks")
	concurrent := flag.Int("concurrent", 0, "append this many events concurrently to the session given by -session and -user")
	sessionID := flag.String("session", "", "session id for -concurrent")
	userID := flag.String("user", "go-user", "user id (for -concurrent: the owner of -session)")
	timeout := flag.Duration("timeout", 5*time.Minute, "overall deadline")
	flag.Parse()

	s := settings{
		endpoint: os.Getenv("COGNIZES_GRPC"),
		key:      os.Getenv("COGNIZES_KEY"),
		engineID: os.Getenv("COGNIZES_ENGINE_ID"),
		ca:       os.Getenv("COGNIZES_GRPC_CA"),
	}
	if s.endpoint == "" || s.engineID == "" {
		fmt.Fprintln(os.Stderr, "COGNIZES_GRPC (host:port) and COGNIZES_ENGINE_ID must be set; COGNIZES_KEY is sent as x-goog-api-key")
		os.Exit(2)
	}
	if *concurrent > 0 && *sessionID == "" {
		fmt.Fprintln(os.Stderr, "-concurrent needs -session (and -user)")
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	c := &checker{}
	var err error
	switch {
	case *memoryMode:
		err = runMemory(ctx, s, c)
	case *concurrent > 0:
		err = runConcurrent(ctx, s, c, *userID, *sessionID, *concurrent)
	default:
		err = runSessions(ctx, s, c, *userID)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	if c.failed > 0 {
		fmt.Printf("%d check(s) failed\n", c.failed)
		os.Exit(1)
	}
	fmt.Println("all checks passed")
}

// --8<-- [start:session-service]
func newSessionService(ctx context.Context, s settings) (session.Service, error) {
	return vertexai.NewSessionService(ctx, vertexai.VertexAIServiceConfig{
		ProjectID:       projectID,
		Location:        location,
		ReasoningEngine: s.engineID,
	}, clientOptions(s)...)
}

// --8<-- [end:session-service]

// stateValue reads one key of a session's state.
func stateValue(sess session.Session, key string) (any, bool) {
	v, err := sess.State().Get(key)
	if err != nil {
		return nil, false
	}
	return v, true
}

// numberIs compares a state value that went through structpb (so float64).
func numberIs(v any, want float64) bool {
	f, ok := v.(float64)
	return ok && f == want
}

func eventText(ev *session.Event) string {
	if ev == nil || ev.Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range ev.Content.Parts {
		if p != nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// runSessions is the ADK session contract, through ADK-Go's Vertex service.
func runSessions(ctx context.Context, s settings, c *checker, userID string) error {
	svc, err := newSessionService(ctx, s)
	if err != nil {
		return fmt.Errorf("vertexai.NewSessionService: %w", err)
	}
	// ADK-Go's Vertex service takes the engine from its config; app names only
	// have to be non-empty. ADK's docs use the engine id as the app name.
	appName := s.engineID

	// Create.
	created, err := svc.Create(ctx, &session.CreateRequest{
		AppName: appName,
		UserID:  userID,
		State:   map[string]any{"k": "v", "app:shared": 1, "user:lang": "fr"},
	})
	if err != nil {
		c.fail("create session: %v", err)
		return nil
	}
	sess := created.Session
	c.check(sess.ID() != "", "create session (id "+sess.ID()+")", "empty session id")
	sid := sess.ID()

	// Get.
	got, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sid})
	if err != nil {
		c.fail("get session: %v", err)
		return nil
	}
	v, _ := stateValue(got.Session, "k")
	c.check(v == "v", "get session: state k=v", "state k = %#v", v)
	c.check(got.Session.UserID() == userID, "get session: user id", "user id = %q", got.Session.UserID())

	// List.
	listed, err := svc.List(ctx, &session.ListRequest{AppName: appName, UserID: userID})
	if err != nil {
		c.fail("list sessions: %v", err)
	} else {
		found := false
		for _, ls := range listed.Sessions {
			if ls.ID() == sid {
				found = true
			}
			if ls.UserID() != userID {
				c.fail("list sessions: session %s of user %q listed for user %q", ls.ID(), ls.UserID(), userID)
			}
		}
		c.check(found, fmt.Sprintf("list sessions of %s contains %s (%d listed)", userID, sid, len(listed.Sessions)), "not listed")
	}

	// Append two events, to the session returned by Get (ADK-Go's AppendEvent
	// only accepts sessions that its own service returned).
	ev1 := session.NewEvent(ctx, "go-invocation-1")
	ev1.Author = "user"
	ev1.Content = genai.NewContentFromText("hello from go", genai.RoleUser)
	ev1.Actions.StateDelta = map[string]any{"count": 1, "temp:scratch": "x", "user:lang": "de", "app:shared": 2}
	if err := svc.AppendEvent(ctx, got.Session, ev1); err != nil {
		c.fail("append event 1: %v", err)
	} else {
		c.ok("append event 1")
	}
	ev2 := session.NewEvent(ctx, "go-invocation-2")
	ev2.Author = "go-agent"
	ev2.Actions.StateDelta = map[string]any{"count": 2}
	if err := svc.AppendEvent(ctx, got.Session, ev2); err != nil {
		c.fail("append event 2: %v", err)
	} else {
		c.ok("append event 2")
	}

	// Get again.
	again, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sid})
	if err != nil {
		c.fail("get session after append: %v", err)
	} else {
		as := again.Session
		n := as.Events().Len()
		c.check(n == 2, "get after append: 2 events", "%d events", n)
		if n >= 1 {
			e := as.Events().At(0)
			c.check(eventText(e) == "hello from go", "get after append: first event text", "text %q", eventText(e))
			c.check(e.Author == "user", "get after append: first event author", "author %q", e.Author)
		}
		v, _ := stateValue(as, "count")
		c.check(numberIs(v, 2), "get after append: count=2", "count = %#v", v)
		v, _ = stateValue(as, "user:lang")
		c.check(v == "de", "get after append: user:lang=de", "user:lang = %#v", v)
		v, _ = stateValue(as, "app:shared")
		c.check(numberIs(v, 2), "get after append: app:shared=2", "app:shared = %#v", v)
		v, has := stateValue(as, "temp:scratch")
		c.check(!has, "get after append: no temp:scratch", "temp:scratch = %#v", v)
		v, _ = stateValue(as, "k")
		c.check(v == "v", "get after append: k=v kept", "k = %#v", v)
	}

	// A second session of the same user sees the user: and app: state.
	second, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
	if err != nil {
		c.fail("create second session: %v", err)
	} else {
		ss := second.Session
		v, _ := stateValue(ss, "user:lang")
		c.check(v == "de", "second session: user:lang=de", "user:lang = %#v", v)
		v, _ = stateValue(ss, "app:shared")
		c.check(numberIs(v, 2), "second session: app:shared=2", "app:shared = %#v", v)
		v, has := stateValue(ss, "k")
		c.check(!has, "second session: no session-scoped k", "k = %#v", v)
		if err := svc.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: ss.ID()}); err != nil {
			c.fail("delete second session: %v", err)
		}
	}

	// Another user must not get the session.
	if _, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: "go-other-user", SessionID: sid}); err == nil {
		c.fail("get session as another user: no error")
	} else {
		c.ok("get session as another user fails (%v)", err)
	}

	// Delete, then Get fails with NOT_FOUND. ADK-Go's Delete first calls
	// GetSession (ownership), then DeleteSession and Wait on its operation.
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: sid}); err != nil {
		c.fail("delete session: %v", err)
	} else {
		c.ok("delete session")
	}
	_, err = svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sid})
	switch {
	case err == nil:
		c.fail("get after delete: no error")
	case status.Code(err) == codes.NotFound:
		c.ok("get after delete: NotFound (%v)", err)
	default:
		c.fail("get after delete: want gRPC NotFound, got code %s: %v", status.Code(err), err)
	}
	// Deleting a missing session is a no-op in ADK-Go (the GetSession before
	// the delete answers NOT_FOUND).
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: sid}); err != nil {
		c.fail("delete again: %v", err)
	} else {
		c.ok("delete again is a no-op")
	}
	return nil
}

// runConcurrent appends n events to one existing session from n goroutines,
// each with state delta {"go-<i>": i}, then reads the session back and checks
// that every key arrived. Nothing is retried, as ADK-Go and the GAPIC
// SessionClient retry nothing: every append must land the first time.
func runConcurrent(ctx context.Context, s settings, c *checker, userID, sessionID string, n int) error {
	svc, err := newSessionService(ctx, s)
	if err != nil {
		return fmt.Errorf("vertexai.NewSessionService: %w", err)
	}
	appName := s.engineID
	got, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		c.fail("get session %s: %v", sessionID, err)
		return nil
	}
	sess := got.Session

	// Invocation ids carry a per-run tag, so that this run's events can be
	// counted in a session that other runs and clients also write to.
	run := fmt.Sprintf("go-concurrent-%d", time.Now().UnixNano())
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := session.NewEvent(ctx, fmt.Sprintf("%s-%d", run, i))
			ev.Author = "go-agent"
			ev.Content = genai.NewContentFromText(fmt.Sprintf("go event %d", i), genai.RoleModel)
			ev.Actions.StateDelta = map[string]any{fmt.Sprintf("go-%d", i): i}
			<-start
			errs[i] = svc.AppendEvent(ctx, sess, ev) // ADK-Go never retries: each append must land
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	failed := 0
	for i, e := range errs {
		if e != nil {
			failed++
			c.fail("append event %d: %v", i, e)
		}
	}
	c.check(failed == 0, fmt.Sprintf("%d concurrent appends in %s", n, elapsed.Round(time.Millisecond)), "%d failed", failed)

	after, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		c.fail("get session after concurrent appends: %v", err)
		return nil
	}
	missing := []string{}
	for i := range n {
		k := fmt.Sprintf("go-%d", i)
		if v, _ := stateValue(after.Session, k); !numberIs(v, float64(i)) {
			missing = append(missing, fmt.Sprintf("%s=%#v", k, v))
		}
	}
	c.check(len(missing) == 0, fmt.Sprintf("state has go-0..go-%d", n-1), "wrong or missing: %s", strings.Join(missing, ", "))
	goEvents := 0
	for ev := range after.Session.Events().All() {
		if strings.HasPrefix(ev.InvocationID, run+"-") {
			goEvents++
		}
	}
	c.check(goEvents == n, fmt.Sprintf("%d events of this run stored (%d events in all)", n, after.Session.Events().Len()), "%d events of this run", goEvents)
	return nil
}

// isNotFound reports a gRPC NOT_FOUND anywhere in err's chain.
func isNotFound(err error) bool {
	if status.Code(err) == codes.NotFound {
		return true
	}
	var se interface{ GRPCStatus() *status.Status }
	return errors.As(err, &se) && se.GRPCStatus().Code() == codes.NotFound
}
