package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	aiplatform "cloud.google.com/go/aiplatform/apiv1beta1"
	"cloud.google.com/go/aiplatform/apiv1beta1/aiplatformpb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// memoryScope is the scope of every memory this program writes.
var memoryScope = map[string]string{"user_id": "go-user"}

// generateWait bounds the wait for GenerateMemories' operation, which is done
// only once a background worker has run.
const generateWait = 3 * time.Minute

func retrieve(ctx context.Context, mc *aiplatform.MemoryBankClient, parent, query string) ([]*aiplatformpb.RetrieveMemoriesResponse_RetrievedMemory, error) {
	resp, err := mc.RetrieveMemories(ctx, &aiplatformpb.RetrieveMemoriesRequest{
		Parent: parent,
		Scope:  memoryScope,
		RetrievalParams: &aiplatformpb.RetrieveMemoriesRequest_SimilaritySearchParams_{
			SimilaritySearchParams: &aiplatformpb.RetrieveMemoriesRequest_SimilaritySearchParams{
				SearchQuery: query,
				TopK:        10,
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return resp.GetRetrievedMemories(), nil
}

func facts(rms []*aiplatformpb.RetrieveMemoriesResponse_RetrievedMemory) string {
	out := make([]string, 0, len(rms))
	for _, rm := range rms {
		out = append(out, fmt.Sprintf("%q (%.3f)", rm.GetMemory().GetFact(), rm.GetDistance()))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// runMemory drives the Memory Bank with the GAPIC MemoryBankClient.
func runMemory(ctx context.Context, s settings, c *checker) error {
	mc, err := aiplatform.NewMemoryBankClient(ctx, clientOptions(s)...)
	if err != nil {
		return fmt.Errorf("aiplatform.NewMemoryBankClient: %w", err)
	}
	defer mc.Close()
	parent := s.engineName()

	// CreateMemory -> operation -> Memory.
	createOp, err := mc.CreateMemory(ctx, &aiplatformpb.CreateMemoryRequest{
		Parent: parent,
		Memory: &aiplatformpb.Memory{Fact: "I live in Lisbon", Scope: memoryScope},
	})
	if err != nil {
		c.fail("create memory: %v", err)
		return nil
	}
	c.ok("create memory: operation %s (done=%t)", createOp.Name(), createOp.Done())
	mem, err := createOp.Wait(ctx)
	if err != nil {
		c.fail("create memory: wait on operation: %v", err)
		return nil
	}
	name := mem.GetName()
	if !c.check(strings.HasPrefix(name, parent+"/memories/") && mem.GetFact() == "I live in Lisbon",
		"create memory: operation result "+name, "memory %v", mem) {
		return nil
	}

	// RetrieveMemories, similarity search.
	rms, err := retrieve(ctx, mc, parent, "where do I live?")
	if err != nil {
		c.fail("retrieve memories (where do I live?): %v", err)
	} else {
		found := false
		for _, rm := range rms {
			if rm.GetMemory().GetName() == name {
				found = true
			}
		}
		c.check(found, "retrieve memories finds the Lisbon fact", "got %s", facts(rms))
	}

	// GetMemory.
	g, err := mc.GetMemory(ctx, &aiplatformpb.GetMemoryRequest{Name: name})
	if err != nil {
		c.fail("get memory: %v", err)
	} else {
		c.check(g.GetFact() == "I live in Lisbon" && g.GetScope()["user_id"] == "go-user", "get memory", "memory %v", g)
	}

	// ListMemories.
	it := mc.ListMemories(ctx, &aiplatformpb.ListMemoriesRequest{Parent: parent})
	listed, found := 0, false
	for {
		m, err := it.Next()
		if err == iterator.Done {
			c.check(found, fmt.Sprintf("list memories contains it (%d listed)", listed), "not listed")
			break
		}
		if err != nil {
			c.fail("list memories: %v", err)
			break
		}
		listed++
		if m.GetName() == name {
			found = true
		}
	}

	// UpdateMemory -> operation -> Memory.
	updOp, err := mc.UpdateMemory(ctx, &aiplatformpb.UpdateMemoryRequest{
		Memory:     &aiplatformpb.Memory{Name: name, Fact: "I live in Porto"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"fact"}},
	})
	if err != nil {
		c.fail("update memory: %v", err)
	} else if upd, err := updOp.Wait(ctx); err != nil {
		c.fail("update memory: wait on operation %s: %v", updOp.Name(), err)
	} else {
		c.check(upd.GetFact() == "I live in Porto", "update memory (operation result)", "memory %v", upd)
		if g, err := mc.GetMemory(ctx, &aiplatformpb.GetMemoryRequest{Name: name}); err != nil {
			c.fail("get memory after update: %v", err)
		} else {
			c.check(g.GetFact() == "I live in Porto" && g.GetScope()["user_id"] == "go-user",
				"get memory after update: fact Porto, scope kept", "memory %v", g)
		}
	}

	// DeleteMemory -> operation; then GetMemory is NOT_FOUND.
	delOp, err := mc.DeleteMemory(ctx, &aiplatformpb.DeleteMemoryRequest{Name: name})
	if err != nil {
		c.fail("delete memory: %v", err)
	} else if err := delOp.Wait(ctx); err != nil {
		c.fail("delete memory: wait on operation %s: %v", delOp.Name(), err)
	} else {
		c.ok("delete memory (operation %s)", delOp.Name())
	}
	if _, err := mc.GetMemory(ctx, &aiplatformpb.GetMemoryRequest{Name: name}); err == nil {
		c.fail("get memory after delete: no error")
	} else {
		c.check(isNotFound(err), "get memory after delete: NotFound", "%v", err)
	}

	// GenerateMemories from direct contents; its operation is done once a
	// background worker has run.
	genOp, err := mc.GenerateMemories(ctx, &aiplatformpb.GenerateMemoriesRequest{
		Parent: parent,
		Scope:  memoryScope,
		Source: &aiplatformpb.GenerateMemoriesRequest_DirectContentsSource_{
			DirectContentsSource: &aiplatformpb.GenerateMemoriesRequest_DirectContentsSource{
				Events: []*aiplatformpb.GenerateMemoriesRequest_DirectContentsSource_Event{{
					Content: &aiplatformpb.Content{
						Role:  "user",
						Parts: []*aiplatformpb.Part{{Data: &aiplatformpb.Part_Text{Text: "My favourite colour is green."}}},
					},
				}},
			},
		},
	})
	if err != nil {
		c.fail("generate memories: %v", err)
		return nil
	}
	c.ok("generate memories: operation %s (done=%t)", genOp.Name(), genOp.Done())
	wctx, cancel := context.WithTimeout(ctx, generateWait)
	defer cancel()
	t0 := time.Now()
	genResp, err := genOp.Wait(wctx)
	if err != nil {
		c.fail("generate memories: wait on operation %s: %v", genOp.Name(), err)
		return nil
	}
	generated := []string{}
	for _, gm := range genResp.GetGeneratedMemories() {
		generated = append(generated, fmt.Sprintf("%s %q", gm.GetAction(), gm.GetMemory().GetFact()))
	}
	c.ok("generate memories: operation done after %s: %s", time.Since(t0).Round(time.Millisecond), strings.Join(generated, "; "))

	rms, err = retrieve(ctx, mc, parent, "favourite colour")
	if err != nil {
		c.fail("retrieve memories (favourite colour): %v", err)
	} else {
		found := false
		for _, rm := range rms {
			if strings.Contains(strings.ToLower(rm.GetMemory().GetFact()), "green") {
				found = true
			}
		}
		c.check(found, "retrieve memories finds green", "got %s", facts(rms))
	}

	// Clean up what GenerateMemories wrote.
	for _, gm := range genResp.GetGeneratedMemories() {
		if gm.GetAction() == aiplatformpb.GenerateMemoriesResponse_GeneratedMemory_DELETED || gm.GetMemory().GetName() == "" {
			continue
		}
		op, err := mc.DeleteMemory(ctx, &aiplatformpb.DeleteMemoryRequest{Name: gm.GetMemory().GetName()})
		if err == nil {
			err = op.Wait(ctx)
		}
		if err != nil {
			c.fail("clean up generated memory %s: %v", gm.GetMemory().GetName(), err)
		}
	}
	return nil
}
