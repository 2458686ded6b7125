package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// clusterJSON is `hermes gateway status --json`'s "cluster" object.
func clusterJSON(st *cluster.Status) map[string]any {
	members := make([]map[string]any, 0, len(st.Members))
	for _, m := range st.Members {
		members = append(members, map[string]any{
			"id": m.ID, "host": m.Host, "pid": m.PID, "alive": m.Alive, "draining": m.Draining,
			"started_at": m.Started.UTC().Format(time.RFC3339), "last_heartbeat": m.LastSeen.UTC().Format(time.RFC3339Nano),
			"heartbeat_age_seconds": st.Now.Sub(m.LastSeen).Seconds(), "leads": nonNil(m.Leads), "leases": m.Leases,
		})
	}
	alive := 0
	for _, m := range st.Members {
		if m.Alive {
			alive++
		}
	}
	return map[string]any{"processes": members, "alive": alive, "queue_depth": st.QueueDepth, "running": st.Running,
		"oldest_item_age_seconds": st.OldestAge.Seconds(), "dead_letters": st.Dead, "outbox": st.Outbox, "leaders": st.Leaders}
}

// printCluster is the human form: one line per process, then the queue.
// Every name comes from the database (another machine wrote it): sanitised.
func printCluster(w io.Writer, st *cluster.Status) {
	alive := 0
	for _, m := range st.Members {
		if m.Alive {
			alive++
		}
	}
	fmt.Fprintf(w, "Cluster: %d of %d processes alive (PostgreSQL store)\n", alive, len(st.Members))
	if len(st.Members) > 0 {
		rows := [][]string{{"ID", "HOST", "PID", "HEARTBEAT", "STATE", "LEADS", "LEASES"}}
		for _, m := range st.Members {
			state := "alive"
			switch {
			case !m.Alive:
				state = "gone"
			case m.Draining:
				state = "draining"
			}
			leads := strings.Join(m.Leads, ",")
			if leads == "" {
				leads = "-"
			}
			rows = append(rows, []string{termsafe.Line(m.ID), termsafe.Line(m.Host), fmt.Sprint(m.PID),
				fmt.Sprintf("%.1fs ago", st.Now.Sub(m.LastSeen).Seconds()), state, termsafe.Line(leads), fmt.Sprint(m.Leases)})
		}
		widths := make([]int, len(rows[0]))
		for _, r := range rows {
			for i, c := range r {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
		for _, r := range rows {
			var b strings.Builder
			for i, c := range r {
				if i > 0 {
					b.WriteString("  ")
				}
				b.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
			fmt.Fprintln(w, "  "+strings.TrimRight(b.String(), " "))
		}
	}
	fmt.Fprintf(w, "Queue: %d items (%d running), oldest %.1fs; dead letters %d; outbox %d\n",
		st.QueueDepth, st.Running, st.OldestAge.Seconds(), st.Dead, st.Outbox)
}
