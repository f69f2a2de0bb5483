package sts_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	awssts "github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/sts"
)

const (
	account = "111122223333"
	trust   = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"sts:AssumeRole"}]}`
)

func setup(t *testing.T) (aws.Config, *awssts.Client, *awsiam.Client) {
	t.Helper()
	roles := iam.New(account)
	cfg := clienttest.Config(t, sts.New(account, roles))
	return cfg, awssts.NewFromConfig(cfg), awsiam.NewFromConfig(clienttest.Config(t, roles))
}

func TestCallerIdentityAndAssumeRole(t *testing.T) {
	ctx := context.Background()
	cfg, c, roles := setup(t)

	me, err := c.GetCallerIdentity(ctx, &awssts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(me.Account) != account || aws.ToString(me.Arn) != "arn:aws:iam::"+account+":root" {
		t.Fatalf("GetCallerIdentity = %s %s", aws.ToString(me.Account), aws.ToString(me.Arn))
	}

	_, err = c.AssumeRole(ctx, &awssts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::" + account + ":role/absent"), RoleSessionName: aws.String("s1")})
	if code := clienttest.ErrorCode(t, err); code != "AccessDenied" {
		t.Fatalf("assuming a missing role code = %s", code)
	}

	created, err := roles.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("admin"), Path: aws.String("/ops/"), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.AssumeRole(ctx, &awssts.AssumeRoleInput{RoleArn: created.Role.Arn, RoleSessionName: aws.String("terraform"), DurationSeconds: aws.Int32(900)})
	if err != nil {
		t.Fatal(err)
	}
	wantARN := "arn:aws:sts::" + account + ":assumed-role/admin/terraform"
	if aws.ToString(out.AssumedRoleUser.Arn) != wantARN ||
		aws.ToString(out.AssumedRoleUser.AssumedRoleId) != aws.ToString(created.Role.RoleId)+":terraform" {
		t.Fatalf("AssumedRoleUser = %+v", out.AssumedRoleUser)
	}
	cr := out.Credentials
	if !strings.HasPrefix(aws.ToString(cr.AccessKeyId), "ASIA") || aws.ToString(cr.SecretAccessKey) == "" || aws.ToString(cr.SessionToken) == "" {
		t.Fatalf("Credentials = %+v", cr)
	}
	if cr.Expiration == nil || cr.Expiration.Before(time.Now()) {
		t.Fatalf("Expiration %v is not in the future", cr.Expiration)
	}

	// A client using the issued credentials is the assumed role.
	assumed := cfg.Copy()
	assumed.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken))
	who, err := awssts.NewFromConfig(assumed).GetCallerIdentity(ctx, &awssts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(who.Arn) != wantARN {
		t.Fatalf("GetCallerIdentity with session credentials = %v, %v", who, err)
	}

	_, err = c.AssumeRole(ctx, &awssts.AssumeRoleInput{RoleArn: created.Role.Arn, RoleSessionName: aws.String("x")})
	if code := clienttest.ErrorCode(t, err); code != "ValidationError" {
		t.Fatalf("one-character session name code = %s", code)
	}
}

func TestAssumeRoleWithWebIdentity(t *testing.T) {
	ctx := context.Background()
	_, c, roles := setup(t)
	created, err := roles.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("karpenter"), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	token := enc([]byte(`{"alg":"RS256"}`)) + "." +
		enc([]byte(`{"sub":"system:serviceaccount:kube-system:karpenter","aud":["sts.amazonaws.com"],"iss":"https://oidc.eks.us-west-2.amazonaws.com/id/ABC"}`)) + ".sig"
	out, err := c.AssumeRoleWithWebIdentity(ctx, &awssts.AssumeRoleWithWebIdentityInput{
		RoleArn: created.Role.Arn, RoleSessionName: aws.String("controller"), WebIdentityToken: aws.String(token),
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.SubjectFromWebIdentityToken) != "system:serviceaccount:kube-system:karpenter" ||
		aws.ToString(out.Audience) != "sts.amazonaws.com" || aws.ToString(out.Provider) != "oidc.eks.us-west-2.amazonaws.com/id/ABC" ||
		aws.ToString(out.AssumedRoleUser.Arn) != "arn:aws:sts::"+account+":assumed-role/karpenter/controller" {
		t.Fatalf("AssumeRoleWithWebIdentity = %+v", out)
	}
	_, err = c.AssumeRoleWithWebIdentity(ctx, &awssts.AssumeRoleWithWebIdentityInput{
		RoleArn: created.Role.Arn, RoleSessionName: aws.String("controller"), WebIdentityToken: aws.String("not-a-jwt"),
	})
	if code := clienttest.ErrorCode(t, err); code != "InvalidIdentityToken" {
		t.Fatalf("bad token code = %s", code)
	}
}
