package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// testAccProtoV6ProviderFactories serves the provider in-process for
// terraform-plugin-testing acceptance tests.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"joist": providerserver.NewProtocol6WithError(New("test")()),
}

// providerSchema is the schema the provider serves over the protocol.
func providerSchema(t *testing.T) *tfprotov6.GetProviderSchemaResponse {
	t.Helper()
	server, err := testAccProtoV6ProviderFactories["joist"]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestProviderSchemaIsValid(t *testing.T) {
	resp := providerSchema(t)
	for _, d := range resp.Diagnostics {
		t.Errorf("schema diagnostic: %s: %s", d.Summary, d.Detail)
	}
	if resp.Provider == nil || resp.Provider.Block == nil {
		t.Fatal("provider schema is empty")
	}
	found := false
	for _, a := range resp.Provider.Block.Attributes {
		if a.Name == "cluster_name" {
			found = true
		}
	}
	if !found {
		t.Error("provider schema lacks cluster_name")
	}
}
