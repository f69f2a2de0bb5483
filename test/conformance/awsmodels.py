#!/usr/bin/env python3
"""Holds awssim to AWS's own service models, as botocore ships them.

For every operation awssim serves (it lists them, with the input constraints
it enforces, at /_awssim/operations):

1. the operation exists in the service's model;
2. the constraints awssim declares on top-level input members (required
   members, value and length ranges, enumerations) are exactly the model's:
   a model constraint awssim leaves to its own logic must say so and why;
3. probes through boto3 (its own validation off) prove the declarations are
   what awssim enforces: values on each bound and every enum value pass,
   values past a bound, outside an enum or a missing required member are
   rejected with the service's validation error naming the member; page
   sizes the model leaves unbounded pass at 10,000;
4. a scenario calls every operation successfully through boto3 with its
   validation on, and each raw response is walked against the model's
   output shape: no member the model lacks, every value of its type, enum
   values from the model's set.

Usage: awsmodels.py --endpoint URL [--region R] [--cluster NAME]
(the cluster is one awssim's EKS has registered, and NAME-ipv6 an IPv6 one)
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY come from the environment.
Exit status 1 lists every difference found.
"""

import argparse
import datetime
import json
import re
import sys
import urllib.request
import xml.etree.ElementTree as ET

import boto3
import botocore
import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError

# awssim's signing names -> botocore service names.
SERVICES = {"ec2": "ec2", "ssm": "ssm", "pricing": "pricing", "sqs": "sqs",
            "events": "events", "iam": "iam", "sts": "sts", "eks": "eks"}

# The error codes each service answers a broken input constraint with.
VALIDATION_CODES = {
    "ec2": {"InvalidParameterValue", "MissingParameter"},
    "iam": {"ValidationError"}, "sts": {"ValidationError"},
    "sqs": {"MissingParameter", "InvalidParameterValue"},
    "events": {"ValidationException"}, "ssm": {"ValidationException"},
    "pricing": {"ValidationException"}, "eks": {"InvalidParameterException"},
}

PAGE_SIZES = {"MaxResults", "maxResults", "MaxItems", "Limit"}
KINDS = ("required", "min", "max", "enum")


class Report:
    def __init__(self):
        self.failures, self.notes, self.counts = [], [], {}

    def fail(self, msg):
        self.failures.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def count(self, what, n=1):
        self.counts[what] = self.counts.get(what, 0) + n


# ---------------------------------------------------------------- constraints

def model_constraints(op_model):
    """The model's constraints on an operation's top-level input members."""
    out = {}
    shape = op_model.input_shape
    if shape is None:
        return out
    for name, member in shape.members.items():
        c = {}
        if name in shape.required_members:
            c["required"] = True
        for k in ("min", "max"):
            if k in member.metadata:
                c[k] = member.metadata[k]
        enum = getattr(member, "enum", None)
        if enum:
            c["enum"] = list(enum)
        if c:
            out[name] = c
    return out


def compare(service, op, op_model, rules, report):
    declared = {r["member"]: r for r in rules or []}
    model = model_constraints(op_model)
    members = op_model.input_shape.members if op_model.input_shape else {}
    where = f"{service} {op}"
    for name, rule in declared.items():
        if name not in members:
            report.fail(f"{where}: awssim constrains {name}, a member the model does not have")
            continue
        if rule.get("type") != members[name].type_name:
            report.fail(f"{where}.{name}: awssim checks it as {rule.get('type')}, the model types it {members[name].type_name}")
    for name in set(model) | set(declared):
        want, have = model.get(name, {}), declared.get(name, {})
        unchecked = have.get("unchecked") or {}
        for kind in KINDS:
            m, a = want.get(kind), have.get(kind)
            if kind == "required":
                m, a = bool(m), bool(a)
            if kind == "enum":
                m = sorted(m) if m else None
                a = sorted(a) if a else None
            if m == a:
                if m not in (None, False):
                    report.count("constraints matching the model")
                continue
            if kind in unchecked and a in (None, False):
                shown = m if not isinstance(m, list) or len(m) <= 8 else f"[{len(m)} values]"
                report.note(f"{where}.{name}: model {kind} {shown} left to awssim's own logic: {unchecked[kind]}")
                report.count("model constraints left unchecked, with a reason")
                continue
            if m in (None, False):
                report.fail(f"{where}.{name}: awssim enforces {kind} {a!r}; the model has no such constraint")
            elif a in (None, False):
                report.fail(f"{where}.{name}: the model's {kind} {m!r} is not enforced by awssim")
            else:
                report.fail(f"{where}.{name}: awssim enforces {kind} {a!r}, the model says {m!r}")


# -------------------------------------------------------------------- samples

def _pattern(shape):
    p = shape.metadata.get("pattern")
    if not p:
        return None
    try:
        return re.compile(p)
    except re.error:
        return None  # a Java construct Python's re does not take: no pattern check


def text(shape, n, index=0):
    """A string of length n that fits the shape's pattern when it can."""
    n = max(n, 0)
    tag = str(index)
    body = (tag + "a" * n)[:n] if n >= len(tag) else "a" * n
    candidates = [body, "/" * n]
    if n >= 2:
        candidates += ["/" + body[:n - 2] + "/", body[:n - 2] + ".a", "v" + "1" * (n - 1)]
    if n == 6:
        candidates.append("123456")
    pat = _pattern(shape)
    if pat is None:
        return body
    for c in candidates:
        if pat.fullmatch(c):
            return c
    return body


def sample(shape, index=0, count=None, length=None):
    """A value of the shape that satisfies the model's constraints."""
    t, md = shape.type_name, shape.metadata
    if t == "string":
        if getattr(shape, "enum", None):
            return shape.enum[0]
        n = length if length is not None else max(md.get("min", 1), min(8, md.get("max", 8)))
        return text(shape, n, index)
    if t in ("integer", "long"):
        lo = md.get("min", 1)
        return lo
    if t in ("double", "float"):
        return float(md.get("min", 1))
    if t == "boolean":
        return False
    if t == "timestamp":
        return datetime.datetime.now(datetime.timezone.utc)
    if t == "blob":
        return b"x"
    if t == "list":
        n = count if count is not None else max(md.get("min", 1), 1)
        return [sample(shape.member, index=i) for i in range(n)]
    if t == "map":
        n = count if count is not None else max(md.get("min", 1), 1)
        return {text(shape.key, 6, i) if not getattr(shape.key, "enum", None) else shape.key.enum[i % len(shape.key.enum)]:
                sample(shape.value, index=i) for i in range(n)}
    if t == "structure":
        fill = list(shape.required_members)
        if not fill and shape.members:
            # An empty structure is not sent at all in the query protocols:
            # give it one member, a string where there is one.
            strings = [n for n, m in shape.members.items() if m.type_name == "string"]
            fill = strings[:1] or list(shape.members)[:1]
        return {name: sample(shape.members[name], index=index) for name in fill}
    return None


# Values for members whose validity the services decide beyond the model
# (a principal that exists, one of two alternatives), so a minimal request is
# valid there too. Set up by prepare().
KNOWN = {}


def base_request(service, op_model):
    shape = op_model.input_shape
    if shape is None:
        return {}
    req = {name: sample(shape.members[name]) for name in shape.required_members}
    req.update(KNOWN.get((service, op_model.name), {}))
    if "DryRun" in shape.members:
        req["DryRun"] = True  # EC2 checks and answers DryRunOperation, launching nothing
    return req


def prepare(clients, cluster):
    """Creates what the minimal requests name, and records it in KNOWN."""
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    role = clients["iam"].create_role(RoleName="conformance-probe", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    KNOWN[("eks", "CreateAccessEntry")] = {"principalArn": role}
    KNOWN[("eks", "CreatePodIdentityAssociation")] = {"roleArn": role}
    KNOWN[("events", "PutRule")] = {"EventPattern": json.dumps({"source": ["aws.ec2"]})}
    KNOWN[("ec2", "DeleteLaunchTemplate")] = {"LaunchTemplateName": "conformance-probe"}


# --------------------------------------------------------------------- probes

class Unsendable(Exception):
    """boto3 cannot send the request on this machine."""


def call(client, op_model, params):
    """Calls an operation; returns (status, code, message)."""
    method = getattr(client, botocore.xform_name(op_model.name))
    try:
        method(**params)
        return 200, "", ""
    except (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError):
        raise
    except botocore.exceptions.BotoCoreError as e:
        # e.g. an EndpointId boto3 routes to a global endpoint it signs
        # with SigV4a, which needs botocore[crt].
        raise Unsendable(f"{type(e).__name__}: {e}") from e
    except ClientError as e:
        err = e.response.get("Error", {})
        return e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0), err.get("Code", ""), err.get("Message", "")


def rejected_for(service, member, status, code, message):
    """A validation error that names the member (as a word of its own)."""
    named = re.search(r"(?<![A-Za-z])" + re.escape(member) + r"(?![A-Za-z])", message, re.IGNORECASE)
    return status == 400 and code in VALIDATION_CODES[service] and named is not None


def probe_values(service, member, shape, rule):
    """(value, should_pass, description) for a member's declared constraints."""
    t = rule.get("type")
    lo, hi, enum = rule.get("min"), rule.get("max"), rule.get("enum")
    out = []
    if t in ("integer", "long"):
        if lo is not None:
            out += [(lo, True, f"= min {lo}"), (lo - 1, False, f"= min-1 {lo - 1}")]
        if hi is not None:
            out += [(hi, True, f"= max {hi}"), (hi + 1, False, f"= max+1 {hi + 1}")]
    elif t == "string" and enum:
        out += [(v, True, f"= {v!r}") for v in enum]
        out.append(("NotAModelValue", False, "outside the enum"))
    elif t == "string":
        if lo is not None:
            out.append((text(shape, lo), True, f"of length min {lo}"))
            if lo > 0:
                out.append((text(shape, lo - 1), False, f"of length min-1 {lo - 1}"))
        if hi is not None:
            out += [(text(shape, hi), True, f"of length max {hi}"), (text(shape, hi + 1), False, f"of length max+1 {hi + 1}")]
    elif t in ("list", "map"):
        counts = []
        if lo is not None:
            counts.append((lo, True))
            if lo > 0:
                counts.append((lo - 1, False))
        if hi is not None:
            counts += [(hi, True), (hi + 1, False)]
        for n, ok in counts:
            if n == 0 and service == "ec2":
                continue  # EC2's query protocol cannot send an empty list
            out.append((sample(shape, count=n), ok, f"with {n} elements"))
    return out


def probe(service, client, op_model, rules, report):
    shape = op_model.input_shape
    base = base_request(service, op_model)
    where = f"{service} {op_model.name}"
    status, code, message = call(client, op_model, base)
    if status >= 500:
        report.fail(f"{where}: a minimal valid request got {status} {code}: {message}")
    for r in rules or []:
        # A request with every required member valid passes the constraints.
        if r.get("required") and rejected_for(service, r["member"], status, code, message):
            report.fail(f"{where}: a minimal valid request is rejected on {r['member']}: {code}: {message}")
    # Page sizes the model leaves unbounded take any value, declared or not.
    declared = {r["member"] for r in rules or []}
    unbounded = [{"member": m, "type": s.type_name, "page": True} for m, s in (shape.members.items() if shape else [])
                 if m in PAGE_SIZES and "max" not in s.metadata and m not in declared]
    for r in (rules or []) + unbounded:
        member = r["member"]
        mshape = shape.members[member]
        cases = probe_values(service, member, mshape, r)
        if member in PAGE_SIZES and r.get("max") is None:
            cases.append((10000, True, "= 10000 (the model sets no maximum)"))
        if r.get("required") and mshape.serialization.get("location") != "uri":
            cases.append((None, False, "missing"))
        for value, ok, desc in cases:
            params = dict(base)
            if value is None:
                params.pop(member, None)
            else:
                params[member] = value
            try:
                status, code, message = call(client, op_model, params)
            except Unsendable as e:
                report.note(f"{where}: {member} {desc} not probed, boto3 cannot send it here: {e}")
                continue
            report.count("probes")
            if status >= 500:
                report.fail(f"{where}: {member} {desc}: {status} {code}: {message}")
            elif ok and rejected_for(service, member, status, code, message):
                report.fail(f"{where}: {member} {desc} is valid in the model but rejected: {code}: {message}")
            elif not ok and not rejected_for(service, member, status, code, message):
                report.fail(f"{where}: {member} {desc} breaks the model's constraint but got {status} {code or 'success'}: {message}")


# ------------------------------------------------------------------ responses

def _local(tag):
    return tag.rsplit("}", 1)[-1]


def check_scalar(shape, value, path, errors):
    t = shape.type_name
    ok = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "long": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "double": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "timestamp": lambda v: isinstance(v, (int, float, str)) and not isinstance(v, bool),
        "blob": lambda v: isinstance(v, str),
    }.get(t, lambda v: True)
    if not ok(value):
        errors.append(f"{path}: {value!r} is not a {t}")
    elif t == "string" and getattr(shape, "enum", None) and value not in shape.enum:
        errors.append(f"{path}: {value!r} is not in the model's enum {list(shape.enum)}")


def walk_json(shape, value, path, errors):
    t = shape.type_name
    if t == "structure":
        if not isinstance(value, dict):
            errors.append(f"{path}: {value!r} is not a structure")
            return
        members = {}
        for n, m in shape.members.items():
            if m.serialization.get("location") in (None, "body") or "location" not in m.serialization:
                members[m.serialization.get("name", n)] = m
        for k, v in value.items():
            if k not in members:
                errors.append(f"{path}.{k}: not a member of {shape.name}")
            elif v is not None:
                walk_json(members[k], v, f"{path}.{k}", errors)
    elif t == "list":
        if not isinstance(value, list):
            errors.append(f"{path}: {value!r} is not a list")
            return
        for i, v in enumerate(value):
            walk_json(shape.member, v, f"{path}[{i}]", errors)
    elif t == "map":
        if not isinstance(value, dict):
            errors.append(f"{path}: {value!r} is not a map")
            return
        for k, v in value.items():
            walk_json(shape.value, v, f"{path}[{k}]", errors)
    else:
        check_scalar(shape, value, path, errors)


def parse_xml_scalar(shape, text_value, path, errors):
    t = shape.type_name
    v = text_value or ""
    try:
        if t in ("integer", "long"):
            int(v)
        elif t in ("double", "float"):
            float(v)
        elif t == "boolean":
            if v not in ("true", "false"):
                raise ValueError(v)
        elif t == "timestamp":
            datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
        elif t == "string" and getattr(shape, "enum", None) and v not in shape.enum:
            errors.append(f"{path}: {v!r} is not in the model's enum {list(shape.enum)}")
    except ValueError:
        errors.append(f"{path}: {v!r} is not a {t}")


def walk_xml(shape, elem, path, errors):
    t = shape.type_name
    if t == "structure":
        members = {}
        for n, m in shape.members.items():
            if m.type_name == "list" and m.serialization.get("flattened"):
                members[m.member.serialization.get("name", m.serialization.get("name", n))] = (m, True)
            else:
                members[m.serialization.get("name", n)] = (m, False)
        flat = {}
        for child in elem:
            tag = _local(child.tag)
            if tag not in members:
                errors.append(f"{path}.{tag}: not a member of {shape.name}")
                continue
            m, flattened = members[tag]
            if flattened:
                walk_xml(m.member, child, f"{path}.{tag}[{flat.setdefault(tag, 0)}]", errors)
                flat[tag] += 1
            else:
                walk_xml(m, child, f"{path}.{tag}", errors)
    elif t == "list":
        item = shape.member.serialization.get("name", "member")
        for i, child in enumerate(elem):
            if _local(child.tag) != item:
                errors.append(f"{path}: list element <{_local(child.tag)}>, the model says <{item}>")
            walk_xml(shape.member, child, f"{path}[{i}]", errors)
    elif t == "map":
        for i, entry in enumerate(elem):
            for part in entry:
                sub = {"key": shape.key, "value": shape.value}.get(_local(part.tag))
                if sub is None:
                    errors.append(f"{path}[{i}]: map element <{_local(part.tag)}>")
                else:
                    walk_xml(sub, part, f"{path}[{i}].{_local(part.tag)}", errors)
    else:
        parse_xml_scalar(shape, elem.text, path, errors)


def check_response(protocol, op_model, body, errors):
    out = op_model.output_shape
    where = op_model.name
    if protocol in ("json", "rest-json"):
        doc = json.loads(body) if body.strip() else {}
        if out is None:
            if doc:
                errors.append(f"{where}: a body {doc!r} where the model has no output")
            return
        walk_json(out, doc, where, errors)
        return
    root = ET.fromstring(body)
    if protocol == "query":
        wrapper = out.serialization.get("resultWrapper") if out is not None else None
        for child in root:
            tag = _local(child.tag)
            if tag == "ResponseMetadata":
                continue
            if wrapper and tag == wrapper:
                walk_xml(out, child, where, errors)
            else:
                errors.append(f"{where}: element <{tag}> outside the result <{wrapper}>")
        return
    # ec2: the members sit under the root beside requestId.
    for child in root:
        if _local(child.tag) == "requestId":
            continue
        if out is None:
            errors.append(f"{where}: element <{_local(child.tag)}> where the model has no output")
            continue
        walk_xml_member(out, child, where, errors)


def walk_xml_member(shape, child, where, errors):
    wrapper = ET.Element("root")
    wrapper.append(child)
    walk_xml(shape, wrapper, where, errors)


class Recorder:
    """Keeps the raw body of each successful call, per operation."""

    def __init__(self):
        self.bodies = {}

    def __call__(self, http_response, parsed, model, **kwargs):
        if http_response.status_code == 200:
            self.bodies.setdefault(model.name, []).append(http_response.content.decode("utf-8"))


# ------------------------------------------------------------------- scenario

def scenario(clients, cluster):
    """Calls every operation awssim serves once with a valid request."""
    ec2, ssm, pricing, sqs, events, iam, sts, eks = (clients[s] for s in ("ec2", "ssm", "pricing", "sqs", "events", "iam", "sts", "eks"))
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    allow = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"}]})

    # IAM
    role = iam.create_role(RoleName="conformance-node", AssumeRolePolicyDocument=trust, Description="node role",
                           Tags=[{"Key": "team", "Value": "conformance"}])["Role"]
    iam.get_role(RoleName="conformance-node")
    iam.update_role(RoleName="conformance-node", Description="updated", MaxSessionDuration=7200)
    iam.list_roles(MaxItems=10)
    iam.update_assume_role_policy(RoleName="conformance-node", PolicyDocument=trust)
    iam.tag_role(RoleName="conformance-node", Tags=[{"Key": "env", "Value": "test"}])
    iam.untag_role(RoleName="conformance-node", TagKeys=["env"])
    iam.list_role_tags(RoleName="conformance-node")
    iam.put_role_policy(RoleName="conformance-node", PolicyName="inline", PolicyDocument=allow)
    iam.get_role_policy(RoleName="conformance-node", PolicyName="inline")
    iam.list_role_policies(RoleName="conformance-node")
    policy = iam.create_policy(PolicyName="conformance", PolicyDocument=allow, Description="d", Tags=[{"Key": "a", "Value": "b"}])["Policy"]
    iam.get_policy(PolicyArn=policy["Arn"])
    iam.list_policies(Scope="Local", MaxItems=5)
    iam.create_policy_version(PolicyArn=policy["Arn"], PolicyDocument=allow, SetAsDefault=True)
    iam.get_policy_version(PolicyArn=policy["Arn"], VersionId="v1")
    iam.list_policy_versions(PolicyArn=policy["Arn"])
    iam.set_default_policy_version(PolicyArn=policy["Arn"], VersionId="v1")
    iam.delete_policy_version(PolicyArn=policy["Arn"], VersionId="v2")
    iam.put_role_permissions_boundary(RoleName="conformance-node", PermissionsBoundary=policy["Arn"])
    iam.delete_role_permissions_boundary(RoleName="conformance-node")
    iam.attach_role_policy(RoleName="conformance-node", PolicyArn=policy["Arn"])
    iam.list_attached_role_policies(RoleName="conformance-node")
    iam.create_instance_profile(InstanceProfileName="conformance-node", Tags=[{"Key": "a", "Value": "b"}])
    iam.add_role_to_instance_profile(InstanceProfileName="conformance-node", RoleName="conformance-node")
    iam.get_instance_profile(InstanceProfileName="conformance-node")
    iam.list_instance_profiles()
    iam.list_instance_profiles_for_role(RoleName="conformance-node")
    iam.tag_instance_profile(InstanceProfileName="conformance-node", Tags=[{"Key": "c", "Value": "d"}])
    iam.untag_instance_profile(InstanceProfileName="conformance-node", TagKeys=["c"])
    iam.list_instance_profile_tags(InstanceProfileName="conformance-node")
    iam.create_service_linked_role(AWSServiceName="spot.amazonaws.com")

    # STS
    sts.get_caller_identity()
    sts.assume_role(RoleArn=role["Arn"], RoleSessionName="conformance", DurationSeconds=900)
    sts.assume_role_with_web_identity(RoleArn=role["Arn"], RoleSessionName="conformance", WebIdentityToken=web_identity_token())

    # EKS
    eks.list_clusters()
    eks.describe_cluster(name=cluster)
    eks.describe_cluster(name=cluster + "-ipv6")  # the IPv6 network config's shape
    eks.create_access_entry(clusterName=cluster, principalArn=role["Arn"], type="EC2_LINUX", tags={"a": "b"})
    eks.list_access_entries(clusterName=cluster)
    eks.describe_access_entry(clusterName=cluster, principalArn=role["Arn"])
    eks.update_access_entry(clusterName=cluster, principalArn=role["Arn"])
    assoc = eks.create_pod_identity_association(clusterName=cluster, namespace="kube-system", serviceAccount="karpenter",
                                                roleArn=role["Arn"])["association"]
    eks.list_pod_identity_associations(clusterName=cluster)
    eks.describe_pod_identity_association(clusterName=cluster, associationId=assoc["associationId"])
    eks.update_pod_identity_association(clusterName=cluster, associationId=assoc["associationId"], roleArn=role["Arn"])
    cluster_arn = eks.describe_cluster(name=cluster)["cluster"]["arn"]
    eks.tag_resource(resourceArn=cluster_arn, tags={"team": "conformance"})
    eks.list_tags_for_resource(resourceArn=cluster_arn)
    eks.untag_resource(resourceArn=cluster_arn, tagKeys=["team"])
    eks.delete_pod_identity_association(clusterName=cluster, associationId=assoc["associationId"])
    eks.delete_access_entry(clusterName=cluster, principalArn=role["Arn"])

    # SSM
    image_param = "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/recommended/image_id"
    image = ssm.get_parameter(Name=image_param)["Parameter"]["Value"]
    ssm.get_parameters(Names=[image_param, "/nope"])
    ssm.get_parameters_by_path(Path="/aws/service/eks/optimized-ami", Recursive=True, MaxResults=10)

    # Pricing
    pricing.describe_services(ServiceCode="AmazonEC2")
    pricing.get_products(ServiceCode="AmazonEC2", MaxResults=2, Filters=[
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": clients["region"]},
        {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "m5.large"}])

    # SQS
    url = sqs.create_queue(QueueName="conformance", Attributes={"MessageRetentionPeriod": "300"}, tags={"a": "b"})["QueueUrl"]
    sqs.get_queue_url(QueueName="conformance")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    sqs.list_queues()
    sqs.tag_queue(QueueUrl=url, Tags={"c": "d"})
    sqs.list_queue_tags(QueueUrl=url)
    sqs.untag_queue(QueueUrl=url, TagKeys=["c"])
    sqs.send_message(QueueUrl=url, MessageBody="one", MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "two"}, {"Id": "b", "MessageBody": "three"}])
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                              MessageSystemAttributeNames=["All"], VisibilityTimeout=30)["Messages"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"], VisibilityTimeout=60)
    sqs.change_message_visibility_batch(QueueUrl=url, Entries=[{"Id": "x", "ReceiptHandle": got[0]["ReceiptHandle"], "VisibilityTimeout": 10}])
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    if len(got) > 1:
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "y", "ReceiptHandle": got[1]["ReceiptHandle"]}])
    else:
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "y", "ReceiptHandle": got[0]["ReceiptHandle"]}])

    # EventBridge
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rule_arn = events.put_rule(Name="conformance", EventPattern=json.dumps({"source": ["aws.ec2"]}), Description="d",
                               Tags=[{"Key": "a", "Value": "b"}])["RuleArn"]
    events.describe_rule(Name="conformance")
    events.list_rules(NamePrefix="conf", Limit=10)
    events.disable_rule(Name="conformance")
    events.enable_rule(Name="conformance")
    events.put_targets(Rule="conformance", Targets=[{"Id": "queue", "Arn": queue_arn}])
    events.list_targets_by_rule(Rule="conformance")
    events.tag_resource(ResourceARN=rule_arn, Tags=[{"Key": "c", "Value": "d"}])
    events.list_tags_for_resource(ResourceARN=rule_arn)
    events.untag_resource(ResourceARN=rule_arn, TagKeys=["c"])
    events.put_events(Entries=[{"Source": "conformance", "DetailType": "test", "Detail": "{}"}])
    events.remove_targets(Rule="conformance", Ids=["queue"])
    events.delete_rule(Name="conformance")

    # EC2
    ec2.describe_availability_zones()
    ec2.describe_vpcs(MaxResults=5)
    subnets = ec2.describe_subnets(MaxResults=5)["Subnets"]
    groups = ec2.describe_security_groups(MaxResults=5)["SecurityGroups"]
    ec2.describe_images(ImageIds=[image])
    copied = ec2.copy_image(SourceImageId=image, SourceRegion=ec2.meta.region_name, Name="conformance-copy",
                            TagSpecifications=[{"ResourceType": "image", "Tags": [{"Key": "a", "Value": "b"}]}])
    ec2.enable_image_deprecation(ImageId=copied["ImageId"], DeprecateAt=datetime.datetime.now(datetime.timezone.utc))
    ec2.describe_instance_types(InstanceTypes=["m5.large", "c7g.xlarge"])
    ec2.describe_instance_type_offerings(LocationType="availability-zone", MaxResults=5)
    ec2.describe_spot_price_history(InstanceTypes=["m5.large"], ProductDescriptions=["Linux/UNIX"], MaxResults=2000)
    ec2.describe_capacity_reservations(MaxResults=5)
    odcr = ec2.create_capacity_reservation(InstanceType="m5.large", InstancePlatform="Linux/UNIX", AvailabilityZone="us-west-2a",
                                           InstanceCount=1, InstanceMatchCriteria="targeted")["CapacityReservation"]
    ec2.cancel_capacity_reservation(CapacityReservationId=odcr["CapacityReservationId"])
    ec2.describe_placement_groups()
    sg = ec2.create_security_group(GroupName="conformance-sg", Description="conformance", VpcId=groups[0]["VpcId"],
                                   TagSpecifications=[{"ResourceType": "security-group", "Tags": [{"Key": "a", "Value": "b"}]}])
    ec2.delete_security_group(GroupId=sg["GroupId"])
    cluster_pg = ec2.create_placement_group(GroupName="conformance-cluster", Strategy="cluster",
                                            TagSpecifications=[{"ResourceType": "placement-group", "Tags": [{"Key": "a", "Value": "b"}]}])["PlacementGroup"]
    ec2.create_placement_group(GroupName="conformance-spread", Strategy="spread", SpreadLevel="rack")
    ec2.create_placement_group(GroupName="conformance-partition", Strategy="partition", PartitionCount=3)
    groups_by_name = ec2.describe_placement_groups(GroupNames=["conformance-partition"], Filters=[{"Name": "state", "Values": ["available"]}])["PlacementGroups"]
    if [g.get("PartitionCount") for g in groups_by_name] != [3]:
        raise SystemExit("describe_placement_groups: the partition group is not listed with its partition count: %r" % groups_by_name)
    ec2.describe_placement_groups(GroupIds=[cluster_pg["GroupId"]])
    lt = ec2.create_launch_template(LaunchTemplateName="conformance", VersionDescription="v", LaunchTemplateData={
        "ImageId": image, "SecurityGroupIds": [groups[0]["GroupId"]],
        "IamInstanceProfile": {"Name": "conformance-node"},
        "TagSpecifications": [{"ResourceType": "instance", "Tags": [{"Key": "a", "Value": "b"}]}]})["LaunchTemplate"]
    ec2.describe_launch_templates(LaunchTemplateNames=["conformance"])
    run = ec2.run_instances(MinCount=1, MaxCount=1, InstanceType="m5.large", SubnetId=subnets[0]["SubnetId"],
                            LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"]})["Instances"]
    fleet = ec2.create_fleet(Type="instant", TargetCapacitySpecification={"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"},
                             LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateId": lt["LaunchTemplateId"], "Version": "$Latest"},
                                                     "Overrides": [{"InstanceType": "m5.large", "SubnetId": subnets[0]["SubnetId"]}]}])
    placed = ec2.run_instances(MinCount=1, MaxCount=1, InstanceType="m5.large", SubnetId=subnets[0]["SubnetId"],
                               LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"]},
                               Placement={"GroupName": "conformance-partition", "PartitionNumber": 2})["Instances"]
    if placed[0]["Placement"].get("GroupName") != "conformance-partition" or placed[0]["Placement"].get("PartitionNumber") != 2:
        raise SystemExit("run_instances: the instance's placement is not its group and partition: %r" % placed[0]["Placement"])
    ids = [i["InstanceId"] for i in run + placed] + [i for x in fleet["Instances"] for i in x["InstanceIds"]]
    ec2.create_tags(Resources=ids, Tags=[{"Key": "team", "Value": "conformance"}])
    ec2.delete_tags(Resources=ids, Tags=[{"Key": "team"}])
    ec2.describe_instances(InstanceIds=ids)
    ec2.describe_instance_status(InstanceIds=ids, IncludeAllInstances=True)
    # An impaired instance and a scheduled event, as the controller's status
    # polling queries them: the failed check carries its ImpairedSince.
    # Status checks run once the instance is running.
    ec2.get_waiter("instance_running").wait(InstanceIds=ids, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    admin = urllib.request.Request(ec2.meta.endpoint_url.rstrip("/") + "/_awssim/ec2/instances/" + ids[0] + "/status",
                                   data=json.dumps({"InstanceImpaired": True, "SystemImpaired": True}).encode(), method="POST")
    urllib.request.urlopen(admin).close()
    admin = urllib.request.Request(ec2.meta.endpoint_url.rstrip("/") + "/_awssim/ec2/instances/" + ids[-1] + "/scheduled-change",
                                   data=json.dumps({"StartSeconds": 3600}).encode(), method="POST")
    urllib.request.urlopen(admin).close()
    impaired = ec2.describe_instance_status(Filters=[{"Name": "instance-status.status", "Values": ["impaired"]}])["InstanceStatuses"]
    if [s["InstanceId"] for s in impaired] != ids[:1] or "ImpairedSince" not in impaired[0]["InstanceStatus"]["Details"][0]:
        raise SystemExit("describe_instance_status: the impaired instance is not listed with its ImpairedSince: %r" % impaired)
    ec2.describe_instance_status(Filters=[{"Name": "system-status.status", "Values": ["impaired"]}])
    ec2.describe_instance_status(Filters=[{"Name": "event.code", "Values": ["instance-reboot", "system-reboot", "system-maintenance",
                                                                          "instance-retirement", "instance-stop"]}])
    ec2.stop_instances(InstanceIds=ids[:1])
    ec2.terminate_instances(InstanceIds=ids)
    ec2.delete_launch_template(LaunchTemplateName="conformance")
    ec2.delete_placement_group(GroupName="conformance-cluster")
    ec2.delete_placement_group(GroupName="conformance-spread")

    # Deletions last, once nothing refers to the entities.
    iam.remove_role_from_instance_profile(InstanceProfileName="conformance-node", RoleName="conformance-node")
    iam.delete_instance_profile(InstanceProfileName="conformance-node")
    iam.detach_role_policy(RoleName="conformance-node", PolicyArn=policy["Arn"])
    iam.delete_policy(PolicyArn=policy["Arn"])
    iam.delete_role_policy(RoleName="conformance-node", PolicyName="inline")
    iam.delete_role(RoleName="conformance-node")
    sqs.purge_queue(QueueUrl=url)
    sqs.delete_queue(QueueUrl=url)
    eks.delete_cluster(name=cluster)


def web_identity_token():
    """An unsigned JWT in the shape EKS's OIDC issuer hands pods."""
    import base64

    def part(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    claims = {"iss": "https://oidc.eks.us-west-2.amazonaws.com/id/CONFORMANCE", "sub": "system:serviceaccount:kube-system:karpenter",
              "aud": ["sts.amazonaws.com"], "exp": 4102444800, "iat": 1700000000}
    return part({"alg": "RS256", "kid": "k"}) + "." + part(claims) + ".c2ln"


# ----------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--region", default="us-west-2")
    ap.add_argument("--cluster", default="conformance")
    args = ap.parse_args()

    report = Report()
    with urllib.request.urlopen(args.endpoint + "/_awssim/operations") as resp:
        served = json.load(resp)
    session = botocore.session.get_session()
    print(f"botocore {botocore.__version__}, boto3 {boto3.__version__}: models from {botocore.__file__.rsplit('/', 1)[0]}/data")

    lax = Config(parameter_validation=False, retries={"max_attempts": 1})
    strict = Config(retries={"max_attempts": 1})
    probe_clients, clients, recorders, protocols = {}, {"region": args.region}, {}, {}
    for signing, name in SERVICES.items():
        region = "us-east-1" if name == "pricing" else args.region
        probe_clients[signing] = boto3.client(name, endpoint_url=args.endpoint, region_name=region, config=lax)
        clients[signing] = boto3.client(name, endpoint_url=args.endpoint, region_name=region, config=strict)
        recorders[signing] = Recorder()
        clients[signing].meta.events.register("after-call", recorders[signing])
        protocols[signing] = session.get_service_model(name).protocol

    prepare(clients, args.cluster)
    for signing in sorted(served):
        if signing not in SERVICES:
            report.fail(f"awssim serves {signing}, which this check does not know")
            continue
        model = session.get_service_model(SERVICES[signing])
        for op in sorted(served[signing]):
            report.count("operations")
            if op not in model.operation_names:
                report.fail(f"{signing} {op}: no such operation in the model")
                continue
            op_model = model.operation_model(op)
            compare(signing, op, op_model, served[signing][op], report)
            probe(signing, probe_clients[signing], op_model, served[signing][op], report)

    try:
        scenario(clients, args.cluster)
    except ClientError as e:
        report.fail(f"scenario: {e}")
    for signing in sorted(served):
        model = session.get_service_model(SERVICES[signing])
        for op in sorted(served[signing]):
            bodies = recorders[signing].bodies.get(op)
            if not bodies:
                report.fail(f"{signing} {op}: the scenario did not call it successfully, so its response is unchecked")
                continue
            for body in bodies:
                errors = []
                try:
                    check_response(protocols[signing], model.operation_model(op), body, errors)
                except (ET.ParseError, ValueError) as e:
                    errors.append(f"{op}: unreadable response: {e}")
                report.count("responses checked")
                for e in errors:
                    report.fail(f"{signing} response {e}")

    for n in report.notes:
        print("note:", n)
    print("; ".join(f"{v} {k}" for k, v in sorted(report.counts.items())))
    if report.failures:
        print(f"{len(report.failures)} differences from AWS's models:")
        for f in report.failures:
            print("  -", f)
        return 1
    print("awssim agrees with AWS's service models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
