import com.google.adk.events.Event;
import com.google.adk.events.EventActions;
import com.google.adk.sessions.Session;
import com.google.adk.sessions.VertexAiSessionService;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.genai.types.Content;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.Part;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The ADK session contract, run through ADK for Java's {@code VertexAiSessionService} against a
 * Cognizes server.
 *
 * <p>Settings (environment): {@code COGNIZES_URL} (e.g. http://127.0.0.1:8000), {@code
 * COGNIZES_KEY} (a Cognizes API key, sent as the OAuth access token: {@code Authorization: Bearer
 * <key>}), {@code COGNIZES_ENGINE_ID} (numeric reasoning engine id, also used as ADK's app name).
 * Project "p", location "us-central1".
 *
 * <p>Prints one line per check ("ok: ..." / "FAIL: ...") and exits 1 if any check failed (2 on a
 * usage error).
 *
 * <p>When createSession fails (e.g. its operation poll times out), the session was usually created
 * all the same: the program then finds it through listSessions and carries on, so the later checks
 * still say something.
 */
public final class SessionContract {
  private static final String PROJECT = "p";
  private static final String LOCATION = "us-central1";
  private static final String USER = "java-user";
  private static final String TEXT_1 = "hello from java";
  private static final String TEXT_2 = "hello again from java";

  private static int failures = 0;

  private static void ok(String what) {
    System.out.println("ok: " + what);
  }

  private static void fail(String what) {
    failures++;
    System.out.println("FAIL: " + what);
  }

  private static void check(boolean condition, String what, String detail) {
    if (condition) {
      ok(what);
    } else {
      fail(what + " -- " + detail);
    }
  }

  private static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder(t.toString());
    for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      sb.append(" <- ").append(c);
    }
    return sb.toString();
  }

  /** JSON numbers come back as Integer, Long or Double: compare by value. */
  private static boolean sameValue(Object actual, Object expected) {
    if (actual instanceof Number a && expected instanceof Number e) {
      return a.doubleValue() == e.doubleValue();
    }
    return Objects.equals(actual, expected);
  }

  private static String stateCheck(Map<String, Object> state, Map<String, Object> expected) {
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, Object> e : expected.entrySet()) {
      if (!state.containsKey(e.getKey())) {
        problems.add(e.getKey() + " missing");
      } else if (!sameValue(state.get(e.getKey()), e.getValue())) {
        problems.add(e.getKey() + "=" + state.get(e.getKey()) + " (want " + e.getValue() + ")");
      }
    }
    return problems.isEmpty() ? null : String.join(", ", problems) + "; state " + new TreeMap<>(state);
  }

  private static String text(Event e) {
    return e.content()
        .flatMap(Content::parts)
        .map(
            parts -> {
              StringBuilder sb = new StringBuilder();
              for (Part p : parts) {
                p.text().ifPresent(sb::append);
              }
              return sb.toString();
            })
        .orElse(null);
  }

  private static Event userEvent(String text, Map<String, Object> stateDelta) {
    return Event.builder()
        .id(Event.generateEventId())
        .invocationId("java-inv-" + Event.generateEventId())
        .author("user")
        .content(Content.builder().role("user").parts(List.of(Part.fromText(text))).build())
        .actions(EventActions.builder().stateDelta(new LinkedHashMap<>(stateDelta)).build())
        .timestamp(Instant.now().toEpochMilli())
        .build();
  }

  private static Set<String> sessionIds(VertexAiSessionService service, String app) {
    return new TreeSet<>(service.listSessions(app, USER).blockingGet().sessionIds());
  }

  /**
   * createSession; on failure, reports it and looks for the one new session of the user (created
   * all the same when only the operation poll failed).
   */
  private static Optional<String> create(
      VertexAiSessionService service, String app, Map<String, Object> state, String what) {
    Set<String> before;
    try {
      before = sessionIds(service, app);
    } catch (RuntimeException e) {
      before = Set.of();
    }
    long started = System.nanoTime();
    try {
      Session s = service.createSession(app, USER, state, null).blockingGet();
      check(s != null && s.id() != null && !s.id().isEmpty(), what, "session " + s);
      return s == null ? Optional.empty() : Optional.ofNullable(s.id());
    } catch (RuntimeException e) {
      long ms = (System.nanoTime() - started) / 1_000_000;
      fail(what + " -- raised after " + ms + " ms: " + describe(e));
    }
    try {
      Set<String> after = sessionIds(service, app);
      after.removeAll(before);
      if (after.size() == 1) {
        String id = after.iterator().next();
        System.out.println("note: continuing with session " + id + ", found by listSessions");
        return Optional.of(id);
      }
      System.out.println("note: listSessions shows " + after.size() + " new sessions: " + after);
    } catch (RuntimeException e) {
      System.out.println("note: listSessions raised " + describe(e));
    }
    return Optional.empty();
  }

  private static int rawStatus(String url, String key) {
    try {
      HttpResponse<String> r =
          HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
              .send(
                  HttpRequest.newBuilder(URI.create(url))
                      .header("Authorization", "Bearer " + key)
                      .timeout(Duration.ofSeconds(10))
                      .GET()
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      return r.statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      System.err.println("SessionContract: set " + name);
      System.exit(2);
    }
    return v;
  }

  public static void main(String[] args) {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    String url = env("COGNIZES_URL").replaceAll("/+$", "");
    String key = env("COGNIZES_KEY");
    String app = env("COGNIZES_ENGINE_ID");

    // --8<-- [start:session-service]
    GoogleCredentials credentials =
        GoogleCredentials.create(new AccessToken(key, Date.from(Instant.parse("2999-01-01T00:00:00Z"))));
    VertexAiSessionService service =
        new VertexAiSessionService(
            PROJECT,
            LOCATION,
            credentials,
            HttpOptions.builder().baseUrl(url).apiVersion("v1beta1").build());
    // --8<-- [end:session-service]

    try {
      run(service, url, key, app);
    } catch (RuntimeException e) {
      fail("unexpected exception: " + describe(e));
    }
    System.out.println(failures == 0 ? "all checks passed" : failures + " check(s) failed");
    System.exit(failures == 0 ? 0 : 1);
  }

  private static void run(VertexAiSessionService service, String url, String key, String app) {
    // 1. createSession
    Map<String, Object> initial = new LinkedHashMap<>();
    initial.put("k", "v");
    initial.put("app:shared", 1);
    initial.put("user:lang", "fr");
    Optional<String> created = create(service, app, initial, "1 createSession returns a session with an id");
    if (created.isEmpty()) {
      fail("2-7 skipped: no session to work on");
      return;
    }
    String id = created.get();

    // 2. getSession
    Session got = null;
    try {
      got = service.getSession(app, USER, id, Optional.empty()).blockingGet();
      if (got == null) {
        fail("2 getSession returns the session with k=v -- empty (no session)");
      } else {
        String problem = stateCheck(got.state(), Map.of("k", "v"));
        check(problem == null, "2 getSession returns the session with k=v", problem);
      }
    } catch (RuntimeException e) {
      fail("2 getSession returns the session with k=v -- raised " + describe(e));
    }

    // 3. listSessions
    try {
      Set<String> ids = sessionIds(service, app);
      check(ids.contains(id), "3 listSessions(" + USER + ") contains the session", "ids " + ids);
    } catch (RuntimeException e) {
      fail("3 listSessions(" + USER + ") contains the session -- raised " + describe(e));
    }

    // 4. appendEvent, twice
    if (got == null) {
      fail("4-7 skipped: getSession gave no session to append to");
      return;
    }
    Map<String, Object> delta1 = new LinkedHashMap<>();
    delta1.put("count", 1);
    delta1.put("temp:scratch", "x");
    delta1.put("user:lang", "de");
    delta1.put("app:shared", 2);
    try {
      Event e1 = service.appendEvent(got, userEvent(TEXT_1, delta1)).blockingGet();
      Event e2 = service.appendEvent(got, userEvent(TEXT_2, Map.of("count", 2))).blockingGet();
      // ADK-Java ignores the HTTP status of :appendEvent: "ok" here only means no exception.
      check(e1 != null && e2 != null, "4 appendEvent x2 completes (ADK-Java ignores the HTTP status)", "null event");
    } catch (RuntimeException e) {
      fail("4 appendEvent x2 completes -- raised " + describe(e));
    }

    // 5. getSession: events and state, as stored by the server
    try {
      Session again = service.getSession(app, USER, id, Optional.empty()).blockingGet();
      if (again == null) {
        fail("5 getSession after appendEvent -- empty (no session)");
      } else {
        List<String> texts = new ArrayList<>();
        for (Event e : again.events()) {
          texts.add(text(e));
        }
        check(
            texts.equals(List.of(TEXT_1, TEXT_2)),
            "5a getSession has the 2 events with their text",
            "events' texts " + texts);
        Map<String, Object> want = new LinkedHashMap<>();
        want.put("count", 2);
        want.put("user:lang", "de");
        want.put("app:shared", 2);
        want.put("k", "v");
        String problem = stateCheck(again.state(), want);
        check(problem == null, "5b state has count=2, user:lang=de, app:shared=2, k=v", problem);
        check(
            !again.state().containsKey("temp:scratch"),
            again.state().containsKey("count")
                ? "5c state has no temp:scratch"
                : "5c state has no temp:scratch (vacuous: the first event's delta is not there)",
            "state " + new TreeMap<>(again.state()));
      }
    } catch (RuntimeException e) {
      fail("5 getSession after appendEvent -- raised " + describe(e));
    }

    // 6. a second session of the same user sees user: and app: state
    Optional<String> second =
        create(service, app, Map.of(), "6a createSession (second session of " + USER + ")");
    if (second.isPresent()) {
      try {
        Session s2 = service.getSession(app, USER, second.get(), Optional.empty()).blockingGet();
        if (s2 == null) {
          fail("6b second session sees user:lang=de, app:shared=2 -- getSession empty");
        } else {
          Map<String, Object> want = new LinkedHashMap<>();
          want.put("user:lang", "de");
          want.put("app:shared", 2);
          String problem = stateCheck(s2.state(), want);
          check(problem == null, "6b second session sees user:lang=de, app:shared=2", problem);
        }
        service.deleteSession(app, USER, second.get()).blockingAwait();
      } catch (RuntimeException e) {
        fail("6b second session sees user:lang=de, app:shared=2 -- raised " + describe(e));
      }
    } else {
      fail("6b skipped: no second session");
    }

    // 7. deleteSession, then getSession is empty. ADK-Java never looks at HTTP status codes: the
    // 404's JSON error body is parsed like a session, has no "userId", and fails getSession's
    // ownership check, so the Maybe completes empty (null from blockingGet) -- no exception.
    try {
      service.deleteSession(app, USER, id).blockingAwait();
      ok("7a deleteSession completes");
    } catch (RuntimeException e) {
      fail("7a deleteSession completes -- raised " + describe(e));
    }
    String sessionUrl =
        url + "/v1beta1/projects/" + PROJECT + "/locations/" + LOCATION + "/reasoningEngines/" + app
            + "/sessions/" + id;
    try {
      Session gone = service.getSession(app, USER, id, Optional.empty()).blockingGet();
      check(
          gone == null,
          "7b getSession after delete is empty (server answered HTTP " + rawStatus(sessionUrl, key) + ")",
          "got " + gone);
    } catch (RuntimeException e) {
      fail("7b getSession after delete is empty -- raised " + describe(e));
    }
  }
}
