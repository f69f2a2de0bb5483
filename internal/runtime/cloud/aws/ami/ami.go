package ami

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// SSMCacheTTL is how long a parameter a pinned (versioned) alias reads is
// trusted: its value never changes. The parameters of an @latest alias are
// read at every AMI refresh, so a release is seen (and drifts nodes) within
// the refresh interval.
const SSMCacheTTL = 24 * time.Hour

// CustomSSMCacheTTL is how long a parameter named by an amiSelectorTerm's
// ssmParameter is trusted: the user may repoint it at any time (Karpenter's
// value).
const CustomSSMCacheTTL = 5 * time.Minute

// Provider resolves AMIs.
type Provider struct {
	ec2        *ec2.Client
	ssm        *ssm.Client
	k8sVersion func(context.Context) (string, error)
	now        func() time.Time

	amis *ttlcache.TTL[string, []awsv1.AMI]
	// pinned holds the parameters pinned aliases read; custom those the
	// selector terms name. A parameter absent from SSM is cached as "".
	pinned *ttlcache.TTL[string, string]
	custom *ttlcache.TTL[string, string]
	// oneByOne is set once GetParameters was denied.
	oneByOne atomic.Bool
}

// New returns a provider that re-resolves every refresh (AMI_REFRESH_INTERVAL).
// k8sVersion returns the cluster's minor version ("1.36").
func New(ec2Client *ec2.Client, ssmClient *ssm.Client, k8sVersion func(context.Context) (string, error), refresh time.Duration) *Provider {
	return &Provider{
		ec2: ec2Client, ssm: ssmClient, k8sVersion: k8sVersion, now: time.Now,
		amis:   ttlcache.New[string, []awsv1.AMI](refresh),
		pinned: ttlcache.New[string, string](SSMCacheTTL),
		custom: ttlcache.New[string, string](CustomSSMCacheTTL),
	}
}

// Invalidate forgets resolved AMIs and the SSM parameters behind them, as
// when their caches time out, so the next List asks EC2 and SSM again.
func (p *Provider) Invalidate() {
	p.amis.Flush()
	p.pinned.Flush()
	p.custom.Flush()
}

// image is a resolved image with the facts used to order candidates.
type image struct {
	ami     awsv1.AMI
	created string
}

// List returns the node class's AMIs, newest first, one per requirement set.
func (p *Provider) List(ctx context.Context, nc *awsv1.EC2NodeClass) ([]awsv1.AMI, error) {
	k8s, err := p.k8sVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("discovering the Kubernetes version for AMI aliases: %w", err)
	}
	key := k8s + "/" + structhash.Hash(nc.Spec.AMISelectorTerms)
	if out, ok := p.amis.Get(key); ok {
		return out, nil
	}
	var images []image
	if alias, ok := nc.Alias(); ok {
		images, err = p.resolveAlias(ctx, alias, k8s)
	} else {
		images, err = p.resolveTerms(ctx, nc.Spec.AMISelectorTerms)
	}
	if err != nil {
		return nil, err
	}
	out := newestPerRequirements(images)
	p.amis.Set(key, out)
	return out, nil
}

func (p *Provider) resolveAlias(ctx context.Context, alias awsv1.Alias, k8s string) ([]image, error) {
	variants, err := aliasVariants(alias, k8s)
	if err != nil {
		return nil, err
	}
	reqsByID := map[string][][]corev1.NodeSelectorRequirement{}
	var ids []string
	var cache *ttlcache.TTL[string, string]
	if alias.Version != awsv1.AliasVersionLatest {
		cache = p.pinned
	}
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Parameter
	}
	values, err := p.parameters(ctx, cache, names)
	if err != nil {
		return nil, fmt.Errorf("alias %s: %w", alias, err)
	}
	for _, v := range variants {
		id := values[v.Parameter]
		if id == "" {
			continue // not every variant is published for every version
		}
		if _, seen := reqsByID[id]; !seen {
			ids = append(ids, id)
		}
		reqsByID[id] = append(reqsByID[id], v.Requirements)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("alias %s: no EKS-optimized image is published for Kubernetes %s; check the version or use @latest", alias, k8s)
	}
	described, err := p.describe(ctx, &ec2.DescribeImagesInput{ImageIds: ids, IncludeDeprecated: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("alias %s: %w", alias, err)
	}
	var out []image
	for _, im := range described {
		for _, reqs := range reqsByID[aws.ToString(im.ImageId)] {
			out = append(out, p.toImage(im, reqs))
		}
	}
	return out, nil
}

func (p *Provider) resolveTerms(ctx context.Context, terms []awsv1.AMISelectorTerm) ([]image, error) {
	var out []image
	for i, term := range terms {
		in := &ec2.DescribeImagesInput{IncludeDeprecated: aws.Bool(true)}
		switch {
		case term.ID != "":
			in.Filters = append(in.Filters, selector.Filter("image-id", term.ID))
		case term.SSMParameter != "":
			id, err := p.parameter(ctx, p.custom, term.SSMParameter)
			if err == nil && id == "" {
				err = fmt.Errorf("SSM has no such parameter")
			}
			if err != nil {
				return nil, fmt.Errorf("spec.amiSelectorTerms[%d].ssmParameter %s: %w", i, term.SSMParameter, err)
			}
			in.Filters = append(in.Filters, selector.Filter("image-id", id))
		}
		if term.Name != "" {
			in.Filters = append(in.Filters, selector.Filter("name", term.Name))
			if term.Owner == "" {
				in.Owners = []string{"self", "amazon"}
			}
		}
		if term.Owner != "" {
			in.Owners = strings.Split(term.Owner, ",")
		}
		in.Filters = append(in.Filters, selector.TagFilters(term.Tags)...)
		if len(in.Filters) == 0 && len(in.Owners) == 0 {
			return nil, fmt.Errorf("spec.amiSelectorTerms[%d] is empty: set alias, id, name, owner, tags or ssmParameter", i)
		}
		described, err := p.describe(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("spec.amiSelectorTerms[%d]: %w", i, err)
		}
		for _, im := range described {
			arch, ok := archOf(im.Architecture)
			if !ok {
				continue
			}
			out = append(out, p.toImage(im, []corev1.NodeSelectorRequirement{archReq(arch)}))
		}
	}
	return out, nil
}

func archOf(a ec2types.ArchitectureValues) (string, bool) {
	switch a {
	case ec2types.ArchitectureValuesX8664:
		return v1.ArchitectureAmd64, true
	case ec2types.ArchitectureValuesArm64:
		return v1.ArchitectureArm64, true
	}
	return "", false
}

func (p *Provider) toImage(im ec2types.Image, reqs []corev1.NodeSelectorRequirement) image {
	deprecated := false
	if dt := aws.ToString(im.DeprecationTime); dt != "" {
		if t, err := time.Parse(time.RFC3339, dt); err == nil && !t.After(p.now()) {
			deprecated = true
		}
	}
	return image{
		ami:     awsv1.AMI{ID: aws.ToString(im.ImageId), Name: aws.ToString(im.Name), Deprecated: deprecated, Requirements: reqs},
		created: aws.ToString(im.CreationDate),
	}
}

func (p *Provider) describe(ctx context.Context, in *ec2.DescribeImagesInput) ([]ec2types.Image, error) {
	var out []ec2types.Image
	pager := ec2.NewDescribeImagesPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing images: %w", err)
		}
		for _, im := range page.Images {
			if im.State == ec2types.ImageStateAvailable || im.State == "" {
				out = append(out, im)
			}
		}
	}
	return out, nil
}

// getParametersMax is how many names one GetParameters call takes.
const getParametersMax = 10

// parameters reads SSM parameters holding image IDs, through cache unless
// it is nil: those not cached in GetParameters calls of up to ten names,
// so an alias's variants cost one call rather than one each. An absent
// parameter is "" (and cached as such). A role without ssm:GetParameters
// (a policy written for Karpenter grants only ssm:GetParameter) reads them
// one by one from then on.
func (p *Provider) parameters(ctx context.Context, cache *ttlcache.TTL[string, string], names []string) (map[string]string, error) {
	out := make(map[string]string, len(names))
	var missing []string
	for _, n := range names {
		if cache != nil {
			if v, ok := cache.Get(n); ok {
				out[n] = v
				continue
			}
		}
		if !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	for len(missing) > 0 && !p.oneByOne.Load() {
		chunk := missing[:min(len(missing), getParametersMax)]
		res, err := p.ssm.GetParameters(ctx, &ssm.GetParametersInput{Names: chunk})
		if awserr.IsCode(err, "AccessDeniedException") {
			p.oneByOne.Store(true)
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading SSM parameters %v: %w", chunk, err)
		}
		got := map[string]string{}
		for _, par := range res.Parameters {
			got[aws.ToString(par.Name)] = aws.ToString(par.Value)
		}
		for _, n := range chunk {
			out[n] = got[n] // absent: listed in InvalidParameters
			if cache != nil {
				cache.Set(n, got[n])
			}
		}
		missing = missing[len(chunk):]
	}
	for _, n := range missing {
		v, err := p.parameter(ctx, cache, n)
		if err != nil {
			return nil, fmt.Errorf("reading SSM parameter %s: %w", n, err)
		}
		out[n] = v
	}
	return out, nil
}

// parameter reads an SSM parameter holding an image ID, through cache
// unless it is nil; an absent parameter is "" (and cached as such).
func (p *Provider) parameter(ctx context.Context, cache *ttlcache.TTL[string, string], name string) (string, error) {
	if cache != nil {
		if v, ok := cache.Get(name); ok {
			return v, nil
		}
	}
	out, err := p.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	var nf *ssmtypes.ParameterNotFound
	switch {
	case errors.As(err, &nf):
		if cache != nil {
			cache.Set(name, "")
		}
		return "", nil
	case err != nil:
		return "", err
	}
	v := aws.ToString(out.Parameter.Value)
	if cache != nil {
		cache.Set(name, v)
	}
	return v, nil
}

// newestPerRequirements keeps, for each distinct requirement set, the
// newest image, preferring images that are not deprecated; the result is
// ordered newest first.
func newestPerRequirements(images []image) []awsv1.AMI {
	sort.SliceStable(images, func(i, j int) bool {
		a, b := images[i], images[j]
		if a.ami.Deprecated != b.ami.Deprecated {
			return !a.ami.Deprecated
		}
		if a.created != b.created {
			return a.created > b.created
		}
		return a.ami.ID < b.ami.ID
	})
	seen := map[string]bool{}
	var out []awsv1.AMI
	for _, im := range images {
		key := requirementsKey(im.ami.Requirements)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, im.ami)
	}
	return out
}

func requirementsKey(reqs []corev1.NodeSelectorRequirement) string {
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		vals := append([]string{}, r.Values...)
		sort.Strings(vals)
		parts = append(parts, r.Key+" "+string(r.Operator)+" "+strings.Join(vals, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// MinorVersion renders an API server's "1" and "36+" (as some
// distributions report) as "1.36", the version the alias parameters name.
func MinorVersion(major, minor string) string {
	return major + "." + strings.TrimRight(minor, "+")
}
