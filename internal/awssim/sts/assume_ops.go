package sts

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

var sessionName = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

type credentialsXML struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type assumedRoleUserXML struct {
	AssumedRoleID string `xml:"AssumedRoleId"`
	Arn           string `xml:"Arn"`
}

type assumeRoleResult struct {
	Credentials     credentialsXML     `xml:"Credentials"`
	AssumedRoleUser assumedRoleUserXML `xml:"AssumedRoleUser"`
}

type webIdentityResult struct {
	Credentials                 credentialsXML     `xml:"Credentials"`
	AssumedRoleUser             assumedRoleUserXML `xml:"AssumedRoleUser"`
	SubjectFromWebIdentityToken string             `xml:"SubjectFromWebIdentityToken"`
	Audience                    string             `xml:"Audience"`
	Provider                    string             `xml:"Provider"`
}

func stsError(status int, code, format string, args ...any) *awsquery.Error {
	return &awsquery.Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...), Sender: true}
}

// issue validates RoleArn, RoleSessionName and DurationSeconds, and issues
// session credentials for the role, remembering whose they are.
func (s *Service) issue(c *awsquery.Call, principal string) (credentialsXML, assumedRoleUserXML, *awsquery.Error) {
	roleARN := c.Form.Get("RoleArn")
	session := c.Form.Get("RoleSessionName")
	if !sessionName.MatchString(session) {
		return credentialsXML{}, assumedRoleUserXML{}, stsError(http.StatusBadRequest, "ValidationError",
			"1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]* and have length between 2 and 64", session)
	}
	duration := 3600
	if v := c.Form.Get("DurationSeconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 900 || n > 43200 {
			return credentialsXML{}, assumedRoleUserXML{}, stsError(http.StatusBadRequest, "ValidationError",
				"1 validation error detected: Value '%s' at 'durationSeconds' failed to satisfy constraint: Member must have value between 900 and 43200", v)
		}
		duration = n
	}
	roleName, roleID, ok := s.lookupRole(roleARN)
	if !ok {
		return credentialsXML{}, assumedRoleUserXML{}, stsError(http.StatusForbidden, "AccessDenied",
			"User: %s is not authorized to perform: sts:AssumeRole on resource: %s", principal, roleARN)
	}
	user := assumedRoleUserXML{
		AssumedRoleID: roleID + ":" + session,
		Arn:           "arn:aws:sts::" + s.account + ":assumed-role/" + roleName + "/" + session,
	}
	creds := credentialsXML{
		AccessKeyID:     s.ids.Upper("ASIA", 20),
		SecretAccessKey: s.ids.Hex(40),
		SessionToken:    "IQoJb3JpZ2luX2VjE" + s.ids.Hex(64),
		Expiration:      s.now().Add(time.Duration(duration) * time.Second).Format(time.RFC3339),
	}
	s.mu.Lock()
	s.sessions[creds.AccessKeyID] = identity{Arn: user.Arn, UserID: user.AssumedRoleID, Account: s.account}
	s.mu.Unlock()
	return creds, user, nil
}

// lookupRole returns the name (without path) and unique ID of the role with
// the ARN.
func (s *Service) lookupRole(arn string) (name, id string, ok bool) {
	if s.roles != nil {
		r, found := s.roles.RoleByARN(arn)
		return r.Name, r.ID, found
	}
	rest, isRole := strings.CutPrefix(arn, "arn:aws:iam::"+s.account+":role/")
	if !isRole || rest == "" {
		return "", "", false
	}
	return rest[strings.LastIndex(rest, "/")+1:], "AROA" + strings.ToUpper(s.ids.Hex(17)), true
}

func (s *Service) assumeRole(c *awsquery.Call) (any, *awsquery.Error) {
	creds, user, err := s.issue(c, s.caller(c).Arn)
	if err != nil {
		return nil, err
	}
	return assumeRoleResult{Credentials: creds, AssumedRoleUser: user}, nil
}

// assumeRoleWithWebIdentity accepts any well-formed JWT (IRSA and Pod
// Identity tokens in the sandbox are not signed by a trusted issuer) and
// reports its subject, audience and issuer.
func (s *Service) assumeRoleWithWebIdentity(c *awsquery.Call) (any, *awsquery.Error) {
	claims, ok := jwtClaims(c.Form.Get("WebIdentityToken"))
	if !ok {
		return nil, stsError(http.StatusBadRequest, "InvalidIdentityToken", "The web identity token that was passed could not be validated by AWS. Get a new identity token from the identity provider and then retry the request.")
	}
	creds, user, err := s.issue(c, "arn:aws:sts::"+s.account+":assumed-role/web-identity")
	if err != nil {
		return nil, err
	}
	return webIdentityResult{
		Credentials:                 creds,
		AssumedRoleUser:             user,
		SubjectFromWebIdentityToken: claims.Sub,
		Audience:                    claims.audience(),
		Provider:                    strings.TrimPrefix(claims.Iss, "https://"),
	}, nil
}

type tokenClaims struct {
	Sub string          `json:"sub"`
	Iss string          `json:"iss"`
	Aud json.RawMessage `json:"aud"`
}

// audience returns the token's aud claim, which may be a string or a list.
func (t tokenClaims) audience() string {
	var one string
	if json.Unmarshal(t.Aud, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(t.Aud, &many) == nil && len(many) > 0 {
		return many[0]
	}
	return ""
}

// jwtClaims decodes the payload of a JWT without verifying it.
func jwtClaims(token string) (tokenClaims, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return tokenClaims{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return tokenClaims{}, false
	}
	var claims tokenClaims
	if json.Unmarshal(payload, &claims) != nil || claims.Sub == "" {
		return tokenClaims{}, false
	}
	return claims, true
}
