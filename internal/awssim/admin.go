package awssim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
)

// adminHandler serves /_awssim/: the request log, faults and the world's
// knobs, as JSON.
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_awssim/healthz", func(w http.ResponseWriter, r *http.Request) { reply(w, map[string]string{"status": "ok"}, nil) })
	mux.HandleFunc("GET /_awssim/env", func(w http.ResponseWriter, r *http.Request) { reply(w, s.Env(), nil) })
	mux.HandleFunc("GET /_awssim/operations", func(w http.ResponseWriter, r *http.Request) { reply(w, s.Operations(), nil) })
	mux.HandleFunc("GET /_awssim/requests", func(w http.ResponseWriter, r *http.Request) {
		reqs := s.recorder.Requests(r.URL.Query().Get("service"), r.URL.Query().Get("operation"))
		if reqs == nil {
			reqs = []Request{}
		}
		reply(w, reqs, nil)
	})
	mux.HandleFunc("DELETE /_awssim/requests", func(w http.ResponseWriter, r *http.Request) { s.recorder.Reset(); reply(w, nil, nil) })
	mux.HandleFunc("GET /_awssim/faults", func(w http.ResponseWriter, r *http.Request) { reply(w, s.faults.List(), nil) })
	mux.HandleFunc("POST /_awssim/faults", func(w http.ResponseWriter, r *http.Request) {
		var f struct {
			fault.Fault
			LatencyMillis int64 `json:"latencyMillis"`
		}
		if !decode(w, r, &f) {
			return
		}
		if f.LatencyMillis > 0 {
			f.Latency = time.Duration(f.LatencyMillis) * time.Millisecond
		}
		added, err := s.faults.Add(f.Fault)
		reply(w, added, err)
	})
	mux.HandleFunc("DELETE /_awssim/faults", func(w http.ResponseWriter, r *http.Request) { s.faults.Clear(); reply(w, nil, nil) })
	mux.HandleFunc("DELETE /_awssim/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.PathValue("id"))
		if !s.faults.Remove(id) {
			reply(w, nil, fmt.Errorf("no fault %q", r.PathValue("id")))
			return
		}
		reply(w, nil, nil)
	})
	mux.HandleFunc("POST /_awssim/ec2/capacity", func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			InstanceType, Zone, CapacityType string
			Available                        int
		}
		if decode(w, r, &c) {
			reply(w, nil, s.EC2.SetCapacity(c.InstanceType, c.Zone, c.CapacityType, c.Available))
		}
	})
	mux.HandleFunc("POST /_awssim/ec2/capacity-reservations", func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			InstanceType, Zone string
			Count              int
		}
		if decode(w, r, &c) {
			id, err := s.EC2.AddCapacityReservation(c.InstanceType, c.Zone, c.Count)
			reply(w, map[string]string{"capacityReservationId": id}, err)
		}
	})
	mux.HandleFunc("POST /_awssim/ec2/visibility-delay", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ Milliseconds int64 }
		if decode(w, r, &c) {
			s.EC2.SetVisibilityDelay(time.Duration(c.Milliseconds) * time.Millisecond)
			reply(w, nil, nil)
		}
	})
	mux.HandleFunc("POST /_awssim/ec2/instances/{id}/spot-interruption", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ NoticeSeconds float64 }
		if decode(w, r, &c) {
			reply(w, nil, s.EC2.InterruptSpot(r.PathValue("id"), time.Duration(c.NoticeSeconds*float64(time.Second))))
		}
	})
	mux.HandleFunc("POST /_awssim/ec2/instances/{id}/rebalance-recommendation", func(w http.ResponseWriter, r *http.Request) {
		reply(w, nil, s.EC2.RecommendRebalance(r.PathValue("id")))
	})
	mux.HandleFunc("POST /_awssim/ec2/instances/{id}/scheduled-change", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ StartSeconds float64 }
		if decode(w, r, &c) {
			reply(w, nil, s.EC2.ScheduleChange([]string{r.PathValue("id")}, time.Now().Add(time.Duration(c.StartSeconds*float64(time.Second)))))
		}
	})
	mux.HandleFunc("POST /_awssim/ec2/instances/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ InstanceImpaired, SystemImpaired bool }
		if decode(w, r, &c) {
			reply(w, nil, s.EC2.SetImpaired(r.PathValue("id"), c.InstanceImpaired, c.SystemImpaired))
		}
	})
	mux.HandleFunc("POST /_awssim/kubelet/failed-boots", func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			Count int
			Tags  map[string]string
		}
		if decode(w, r, &c) {
			reply(w, nil, s.FailBoots(c.Count, c.Tags))
		}
	})
	mux.HandleFunc("GET /_awssim/amis", func(w http.ResponseWriter, r *http.Request) { reply(w, s.EC2.Images(), nil) })
	mux.HandleFunc("POST /_awssim/amis", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ Family, Architecture, Variant string }
		if decode(w, r, &c) {
			rel, err := s.PublishAMI(c.Family, c.Architecture, c.Variant)
			reply(w, rel, err)
		}
	})
	return mux
}

// decode reads a JSON request body, answering 400 when it does not parse.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.ContentLength == 0 {
		return true
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		reply(w, nil, fmt.Errorf("request body: %w", err))
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	if v == nil {
		v = map[string]string{"status": "ok"}
	}
	_ = json.NewEncoder(w).Encode(v)
}
