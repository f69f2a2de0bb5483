package ec2

import (
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/ec2/wire"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

// Service is one account's EC2 in one region. It is an http.Handler for
// requests already routed to EC2, and safe for concurrent use.
type Service struct {
	opts    Options
	catalog *catalog.Catalog
	region  catalog.Region
	ids     *seqid.Sequence
	ops     map[string]func(url.Values, string) ([]byte, *protocol.Error)
	events  *notifier

	mu              sync.Mutex
	world           world
	instances       map[string]*instance
	order           []*instance // launch order, for stable Describe output
	templates       map[string]*launchTemplate
	templateNames   map[string]string // name -> id
	limit           map[pool]int      // pool size; absent = DefaultPoolCapacity
	used            map[pool]int      // instances not yet terminated, per pool
	reservations    []*capacityReservation
	placementGroups []*placementGroup
	// blockEnds expire capacity blocks at their end dates.
	blockEnds        map[string]*time.Timer
	visibilityDelay  time.Duration
	terminationTimer map[string]*time.Timer
	// runTokens answers a repeated RunInstances ClientToken (the SDK fills
	// one in and retries with it) with the first call's reservation, as EC2
	// does, so a retried call whose answer was lost launches nothing more.
	runTokens map[string]*ec2.RunInstancesOutput
}

// New returns a seeded EC2 for the options' region and cluster.
func New(opts Options) (*Service, error) {
	opts = opts.WithDefaults()
	cat, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	region, ok := catalog.LookupRegion(opts.Region)
	if !ok {
		return nil, protocol.Errorf("InvalidRegion", "region %q has no catalog data; use one of %v", opts.Region, catalog.RegionNames())
	}
	s := &Service{
		opts:             opts,
		catalog:          cat,
		region:           region,
		ids:              seqid.New("ec2/" + opts.AccountID + "/" + opts.Region),
		events:           newNotifier(opts.Events),
		instances:        map[string]*instance{},
		templates:        map[string]*launchTemplate{},
		templateNames:    map[string]string{},
		limit:            map[pool]int{},
		blockEnds:        map[string]*time.Timer{},
		used:             map[pool]int{},
		terminationTimer: map[string]*time.Timer{},
		runTokens:        map[string]*ec2.RunInstancesOutput{},
	}
	s.world = seedWorld(s)
	s.ops = map[string]func(url.Values, string) ([]byte, *protocol.Error){
		"CancelCapacityReservation":     op(s, "CancelCapacityReservation", s.cancelCapacityReservation),
		"CopyImage":                     op(s, "CopyImage", s.copyImage),
		"CreateCapacityReservation":     op(s, "CreateCapacityReservation", s.createCapacityReservation),
		"CreateFleet":                   op(s, "CreateFleet", s.createFleet),
		"CreateLaunchTemplate":          op(s, "CreateLaunchTemplate", s.createLaunchTemplate),
		"CreatePlacementGroup":          op(s, "CreatePlacementGroup", s.createPlacementGroup),
		"CreateSecurityGroup":           op(s, "CreateSecurityGroup", s.createSecurityGroup),
		"CreateTags":                    op(s, "CreateTags", s.createTags),
		"DeleteSecurityGroup":           op(s, "DeleteSecurityGroup", s.deleteSecurityGroup),
		"DeleteTags":                    op(s, "DeleteTags", s.deleteTags),
		"DeleteLaunchTemplate":          op(s, "DeleteLaunchTemplate", s.deleteLaunchTemplate),
		"DeletePlacementGroup":          op(s, "DeletePlacementGroup", s.deletePlacementGroup),
		"DescribeAvailabilityZones":     op(s, "DescribeAvailabilityZones", s.describeAvailabilityZones),
		"DescribeCapacityReservations":  op(s, "DescribeCapacityReservations", s.describeCapacityReservations),
		"DescribeImages":                op(s, "DescribeImages", s.describeImages),
		"DescribeInstanceStatus":        op(s, "DescribeInstanceStatus", s.describeInstanceStatus),
		"DescribeInstanceTypeOfferings": op(s, "DescribeInstanceTypeOfferings", s.describeInstanceTypeOfferings),
		"DescribeInstanceTypes":         op(s, "DescribeInstanceTypes", s.describeInstanceTypes),
		"DescribeInstances":             op(s, "DescribeInstances", s.describeInstances),
		"DescribeLaunchTemplates":       op(s, "DescribeLaunchTemplates", s.describeLaunchTemplates),
		"DescribePlacementGroups":       op(s, "DescribePlacementGroups", s.describePlacementGroups),
		"DescribeSecurityGroups":        op(s, "DescribeSecurityGroups", s.describeSecurityGroups),
		"DescribeSpotPriceHistory":      op(s, "DescribeSpotPriceHistory", s.describeSpotPriceHistory),
		"DescribeSubnets":               op(s, "DescribeSubnets", s.describeSubnets),
		"DescribeVpcs":                  op(s, "DescribeVpcs", s.describeVpcs),
		"EnableImageDeprecation":        op(s, "EnableImageDeprecation", s.enableImageDeprecation),
		"RunInstances":                  op(s, "RunInstances", s.runInstances),
		"StopInstances":                 op(s, "StopInstances", s.stopInstances),
		"TerminateInstances":            op(s, "TerminateInstances", s.terminateInstances),
	}
	return s, nil
}

// Close stops the service's timers and event delivery.
func (s *Service) Close() {
	s.mu.Lock()
	for id, t := range s.terminationTimer {
		t.Stop()
		delete(s.terminationTimer, id)
	}
	for _, in := range s.instances {
		if in.timer != nil {
			in.timer.Stop()
		}
	}
	s.mu.Unlock()
	s.events.close()
}

// Region is the region the service serves.
func (s *Service) Region() catalog.Region { return s.region }

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := s.ids.UUID()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		protocol.WriteEC2Error(w, requestID, errorf("InvalidRequest", "reading the request body: %v", err))
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		protocol.WriteEC2Error(w, requestID, errorf("InvalidQueryParameter", "the request body is not a valid query string: %v", err))
		return
	}
	for k, v := range r.URL.Query() {
		form[k] = append(form[k], v...)
	}
	action := form.Get("Action")
	handle, ok := s.ops[action]
	if !ok {
		protocol.WriteEC2Error(w, requestID, errorf("InvalidAction", "The action %s is not valid for this web service.", action))
		return
	}
	out, perr := handle(form, requestID)
	if perr != nil {
		protocol.WriteEC2Error(w, requestID, perr)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// op adapts a typed handler: it decodes the form into the SDK input type,
// checks it against the operation's constraints, answers DryRun requests with DryRunOperation once the input is valid, and
// renders the SDK output type as the operation's XML response.
func op[In, Out any](s *Service, name string, fn func(*In, bool) (*Out, *protocol.Error)) func(url.Values, string) ([]byte, *protocol.Error) {
	return func(form url.Values, requestID string) ([]byte, *protocol.Error) {
		in := new(In)
		if err := wire.Decode(form, in); err != nil {
			return nil, errorf("InvalidParameterValue", "%v", err)
		}
		if v := constraint.Check(constraints[name], constraint.Fields(in)); v != nil {
			return nil, invalid(v)
		}
		dryRun := false
		if f := reflect.ValueOf(in).Elem().FieldByName("DryRun"); f.IsValid() && !f.IsNil() {
			dryRun = f.Elem().Bool()
		}
		out, err := fn(in, dryRun)
		if err != nil {
			return nil, err
		}
		if dryRun {
			return nil, errDryRun()
		}
		return wire.Encode(name, requestID, out), nil
	}
}
